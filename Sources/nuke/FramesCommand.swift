import ArgumentParser
import Foundation
import NukeCore
import NukePixels

/// `nuke frames`: writes every frame of an animation, composited, one file per frame.
struct FramesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "frames",
        abstract: "Write each frame of an animation, composited on its canvas, as NAME.N.EXT.",
        discussion: """
        Frames are decoded one at a time (ImageAnimation's lazy iterator), so a long animation \
        needs memory for one canvas, not for every frame. A still image writes one file. Each \
        line of output gives the frame's file, its stored duration, the duration browsers show, \
        its disposal and blending.
        """
    )

    @Argument(help: "The image file.")
    var input: String

    @Option(name: .customLong("output-dir"), help: "Where to write the frames (created when missing).")
    var outputDirectory: String

    @Option(help: "Output format: pam (default), ppm, png, jpeg, gif...")
    var to: String = "pam"

    @Option(help: "Memory budget of the frame iterator, in MiB.")
    var budget: Int = 512

    @OptionGroup var isolation: IsolationOptions

    func run() throws {
        isolation.apply(inputs: [input])
        guard let format = OutputFormat(name: to) else {
            throw ValidationError("unknown output format '\(to)'")
        }
        do {
            try writeFrames(as: format)
        } catch {
            Terminal.error(path: input, error)
            throw ExitStatus.code(for: [error])
        }
    }

    private func writeFrames(as format: OutputFormat) throws {
        let data = try ImageFiles.read(input)
        let container = try ImageDecoderRegistry.shared.decode(data)
        let stem = URL(fileURLWithPath: input).deletingPathExtension().lastPathComponent
        func path(_ index: Int) -> String {
            URL(fileURLWithPath: outputDirectory).appendingPathComponent("\(stem).\(index).\(format.fileExtension)").path
        }
        guard let animation = container.animation else {
            try ImageFiles.write(try format.encode(container.image, options: ImageEncodingOptions()), to: path(0))
            print("\(path(0))  still")
            return
        }
        print("\(animation.frameCount) frames, \(animation.canvasSize), loop count \(animation.loopCount == 0 ? "forever" : String(animation.loopCount))")
        let frames = try animation.makeIterator(memoryBudget: budget << 20)
        while let frame = try frames.next() {
            let output = path(frame.index)
            try ImageFiles.write(try format.encode(Image(bitmap: frame.canvas), options: ImageEncodingOptions()), to: output)
            let info = frame.info
            print("\(output)  \(info.duration) s (shown \(info.browserDuration) s), \(info.width)×\(info.height) at \(info.x),\(info.y), disposal \(info.disposal), blending \(info.blending)\(info.isIndependent ? ", independent" : "")")
        }
    }
}
