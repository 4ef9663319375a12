import ArgumentParser
import Foundation
import NukeCore

/// `nuke convert`: one file to another format, or many files into a directory.
struct ConvertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert images: decode with the registry, encode by the output's extension or --to.",
        discussion: """
        One file:   nuke convert IN OUT [--to FORMAT] [--quality Q] [--max-size WxH] [--lossless]
        Many files: nuke convert FILE|DIR... --to FORMAT --output DIR [--jobs N]
        Processing: nuke convert IN OUT --resize fill:256x256 --crop center [--blur 4] [--round 16] \
                    [--circle] [--rotate 90] [--flip h] [--flatten white] [--frame N]

        Processors run in that order, after the decode (upright, in the output colour); the \
        resize is planned into the decode, so a fill decodes to cover its box where the codec \
        can reduce. An animation written to GIF, WebP or APNG stays animated, each frame \
        processed as it is encoded (timing and loop count kept); a still output takes frame 0 \
        or --frame N.

        Formats: those with an encoder in `nuke formats`, plus pam (the decoded pixels as they \
        are: gray, gray+alpha, RGB or RGBA, 8 or 16 bits) and ppm (PPM, or PGM for gray; alpha \
        dropped) for comparison with other tools.

        In a batch, directories are searched recursively for image files, each file is converted \
        independently (a failure never stops the batch), and the exit code is non-zero when any \
        file failed.
        """
    )

    @Argument(help: "IN OUT; with --output, the files and directories to convert.")
    var paths: [String]

    @Option(help: "Output format (png, jpeg, pam, ppm, webp…). Default: OUT's extension.")
    var to: String?

    @Option(help: "Quality for lossy formats, 0–100. Default: 80.")
    var quality: Double?

    @Option(help: "Fit inside WxH (or N for N×N): a scaled decode where the codec has one, then a box + bicubic resize (Pillow's thumbnail).")
    var maxSize: SizeArgument?

    @Flag(help: "With --max-size: let a codec whose own scaler is faster but softer scale straight to the size (libwebp's, for opaque WebP), as vipsthumbnail does.")
    var fastScaling = false

    @Flag(help: "Encode losslessly where the format offers both.")
    var lossless = false

    @Flag(help: "Write a progressive JPEG or an interlaced PNG.")
    var progressive = false

    @Flag(name: .customLong("8-bit"), help: "Scale 16-bit samples to 8 bits (by default PAM, PPM and PNG keep them).")
    var eightBit = false

    @Option(help: "apply: turn the pixels upright as the EXIF orientation says (as vipsthumbnail does); keep: the stored pixels, with the orientation in the output's metadata. Default: apply, except for pam and ppm (the decoded pixels as stored).")
    var orientation: OrientationChoice?

    @Option(help: "srgb: convert the pixels to sRGB with Little CMS from the file's ICC profile, nclx or CMYK (as vipsthumbnail and sharp do); keep: the file's colours and profile; or the path of an RGB ICC profile to convert to. Default: srgb with --max-size or --resize (a thumbnail) and where the output cannot hold the colour (CMYK; anything to GIF), otherwise keep.")
    var color: String?

    @Option(help: "Metadata written: all (EXIF, XMP, ICC), display (only what shows the image correctly: the ICC profile, and the orientation when the pixels are not upright; no camera data, GPS, serial numbers or XMP), none. Default: display with --max-size or --resize (a thumbnail), otherwise all.")
    var metadata: ImageMetadataPolicy.Kept?

    @Flag(help: "With --metadata all: remove the GPS location from EXIF (and leave out XMP that mentions GPS).")
    var stripLocation = false

    @Option(help: "The colour transparent pixels are composited onto when the output has no alpha (JPEG): #rrggbb, white or black. Default: white.")
    var background: String?

    @Flag(help: "Input from strangers: the untrusted limits (40 MP, 16,384 px a side, 100 frames, 256 MiB, at most 4,096 decoded bytes per input byte) and strict decoding (data the codec only warns about is an error).")
    var untrusted = false

    @Option(help: "The page of a multi-page file (TIFF) to convert, from 1 (--option page=N).")
    var page: Int?

    @Option(name: .customLong("option"), help: ArgumentHelp(
        "A decode option a linked codec declares, as NAME=VALUE; repeatable. `nuke formats` lists them (TIFF's page, SVG's dpi).",
        valueName: "name=value"))
    var decodingOptions: [String] = []

    @OptionGroup(title: "Processing") var processing: ProcessingOptions

    @OptionGroup var isolation: IsolationOptions

    @Option(name: [.short, .long], help: "Batch mode: the directory to write converted files to.")
    var output: String?

    @Option(help: "Batch mode: files converted at the same time.")
    var jobs: Int = ProcessInfo.processInfo.activeProcessorCount

    func validate() throws {
        if output == nil {
            guard paths.count == 2 else {
                throw ValidationError("expected IN and OUT (to convert several files, add --output DIR and --to FORMAT)")
            }
            guard format(for: paths[1]) != nil else {
                let ext = URL(fileURLWithPath: paths[1]).pathExtension
                throw ValidationError(ext.isEmpty ? "OUT has no extension: give --to FORMAT" : "unknown output format '\(ext)': give --to FORMAT")
            }
        } else {
            guard !paths.isEmpty else { throw ValidationError("no input files or directories") }
            guard to != nil else { throw ValidationError("batch mode needs --to FORMAT") }
        }
        if let to, OutputFormat(name: to) == nil {
            throw ValidationError("unknown output format '\(to)'")
        }
        if let quality, !(0...100).contains(quality) {
            throw ValidationError("--quality must be between 0 and 100")
        }
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        if let background, RGBColor(background) == nil {
            throw ValidationError("--background must be #rrggbb, white or black")
        }
    }

    private func format(for outputPath: String) -> OutputFormat? {
        if let to { return OutputFormat(name: to) }
        return OutputFormat(name: URL(fileURLWithPath: outputPath).pathExtension)
    }

    /// The encoder's options: quality, progressive, lossless, metadata and background.
    var options: ImageEncodingOptions {
        let kept = metadata ?? (isThumbnail ? .display : .all)
        return ImageEncodingOptions(
            quality: (quality ?? 80) / 100, isProgressive: progressive, isLossless: lossless,
            metadata: ImageMetadataPolicy(kept: kept, removesLocation: stripLocation),
            background: background.flatMap(RGBColor.init) ?? .white
        )
    }

    /// A thumbnail is asked for (`--max-size` or `--resize`): sRGB and display metadata by default.
    var isThumbnail: Bool { maxSize != nil || processing.resize != nil }

    /// The colour the decode converts to: `--color`, or sRGB for a thumbnail.
    func colorTarget() throws -> ImageColorTarget? {
        switch color?.lowercased() {
        case nil: return isThumbnail ? .sRGB : nil
        case "srgb": return .sRGB
        case "keep": return nil
        default:
            guard let path = color, let profile = FileManager.default.contents(atPath: path) else {
                throw ValidationError("--color: cannot read the ICC profile \(color ?? "")")
            }
            return .profile(profile)
        }
    }

    /// Whether the decode turns the pixels upright for `format`.
    func appliesOrientation(for format: OutputFormat) -> Bool {
        switch orientation {
        case .apply: true
        case .keep: false
        case nil: !format.holdsDecodedPixels
        }
    }

    func run() async throws {
        isolation.apply(inputs: output == nil ? [paths[0]] : nil)
        if let output {
            try await runBatch(outputDirectory: output)
            return
        }
        guard let format = format(for: paths[1]) else { throw ExitCode.validationFailure }
        var conversion = Conversion(format: format, options: options, maxSize: maxSize?.size, keepsHighBitDepth: !eightBit, allocator: .heap)
        conversion.isUntrusted = untrusted
        conversion.prefersFastScaling = fastScaling
        conversion.appliesOrientation = appliesOrientation(for: format)
        conversion.colorTarget = try colorTarget()
        conversion.keepsStoredColor = color?.lowercased() == "keep"
        conversion.processors = processing.processors
        conversion.frame = processing.frame
        conversion.decodingOptions = try resolvedDecodingOptions()
        let result = conversion.run(input: paths[0], output: paths[1])
        if let error = result.error {
            Terminal.error(path: paths[0], error)
            throw ExitStatus.code(for: [error])
        }
        let size = result.size.map { "\($0.width)×\($0.height)" } ?? ""
        print("\(paths[0]) → \(paths[1]) (\(format), \(size), \(Terminal.bytes(result.bytesIn)) → \(Terminal.bytes(result.bytesOut)))")
    }
}

/// `--orientation`.
enum OrientationChoice: String, ExpressibleByArgument, CaseIterable {
    case apply, keep
}

extension ImageMetadataPolicy.Kept: ExpressibleByArgument {}

extension ConvertCommand {
    /// `--option NAME=VALUE` (and `--page N`, its shorthand for `page`) as the `userInfo` of the
    /// decode: each name is an option a linked codec declares (``NukeCore/ImageDecodingOption``),
    /// each value one it accepts.
    func resolvedDecodingOptions() throws -> [String: any Sendable] {
        let declared = ImageCodec.linkedDecodingOptions
        var resolved: [String: any Sendable] = [:]
        for text in decodingOptions + (page.map { ["page=\($0)"] } ?? []) {
            let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let option = declared.first(where: { $0.name == parts[0] }) else {
                let names = declared.map(\.name).joined(separator: ", ")
                throw ValidationError("--option \(text): not NAME=VALUE with a NAME a linked codec declares (\(names))")
            }
            guard let value = option.parse(parts[1]) else {
                throw ValidationError("--option \(text): \(option.name) takes \(option.summary)")
            }
            resolved[option.key] = value
        }
        return resolved
    }
}
