import Foundation
import NukeColor
import NukeCore
import NukeHEIF
import NukeJPEG
import NukePNG
import NukePixels
import NukeWebP

// One long-lived process that thumbnails files named on standard input with NukeCodecs' API, as
// a service does: Benchmarks/Thumbnails/steady_state.py runs it beside pyvips and Pillow workers
// that answer the same requests (steady_worker.py).
//
//     NukeSteadyThumbnails [--size N] [--quality Q]
//
// Requests, one a line, fields separated by tabs:
//
//     T  IN  OUT  [PIXELS]   thumbnail IN into the SIZE×SIZE box, JPEG at quality Q to OUT; with
//                            PIXELS, also write the thumbnail's pixels losslessly there (PNG),
//                            after the clock has stopped
//     R                      the process's peak resident size
//
// Answers: `ok CPU_NS WALL_NS WIDTH HEIGHT` (the process's CPU time for the request, all
// threads, from CLOCK_PROCESS_CPUTIME_ID: reading, decoding to size, resizing, encoding and
// writing), `rss KIB` (getrusage's ru_maxrss), or `err MESSAGE`.
//
// Each thumbnail is what Examples/ThumbnailService does for an upload and `nuke convert
// --max-size` for a file: a decode to the box (the codec's own reduction down to twice the size,
// then the core's resampler), the pixels upright (EXIF orientation) and in sRGB, JPEG with the
// display metadata only. Pixel memory comes from one PixelBufferPool, as `nuke convert`'s batch mode.

var size = 256
var quality = 85
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    switch flag {
    case "--size": size = arguments.popFirst().flatMap { Int($0) } ?? size
    case "--quality": quality = arguments.popFirst().flatMap { Int($0) } ?? quality
    default:
        FileHandle.standardError.write(Data("usage: NukeSteadyThumbnails [--size N] [--quality Q]\n".utf8))
        exit(2)
    }
}

let box = ImageSize(width: size, height: size)
let options = ImageEncodingOptions(quality: Double(quality) / 100, metadata: .display, background: .white)
let allocator = PixelAllocator.pool(PixelBufferPool(idleByteBudget: 512 << 20))

/// The process's CPU time (all threads) in nanoseconds.
func processCPU() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// A monotonic clock in nanoseconds.
func wallClock() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Reads `input`, decodes it to the box, and returns the thumbnail's JPEG and its image.
func thumbnail(_ input: String) throws -> (jpeg: Data, image: Image) {
    let data = try Data(contentsOf: URL(fileURLWithPath: input))
    var context = ImageDecoderRegistry.shared.makeContext(for: data)
    context.allocator = allocator
    context.targetSize = box
    context.contentMode = .aspectFit
    context.appliesOrientation = true
    context.colorConversion = .sRGB
    var image = try ImageDecoderRegistry.shared.decode(context).image
    let fit = ImageSize(width: image.width, height: image.height).fitted(to: box, contentMode: .aspectFit)
    if fit.width < image.width || fit.height < image.height { image.bitmap = image.bitmap.resized(to: fit) }
    image.frames = [image.frames[0]]
    return (try ImageEncoderRegistry.shared.encode(image, as: .jpeg, options: options), image)
}

func answer(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

while let line = readLine() {
    let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
    switch fields.first {
    case "T" where fields.count >= 3:
        let cpu = processCPU(), wall = wallClock()
        do {
            let (jpeg, image) = try thumbnail(fields[1])
            try jpeg.write(to: URL(fileURLWithPath: fields[2]))
            let cpuSpent = processCPU() - cpu, wallSpent = wallClock() - wall
            if fields.count >= 4, !fields[3].isEmpty {
                let png = try ImageEncoderRegistry.shared.encode(image, as: .png, options: ImageEncodingOptions(metadata: .none))
                try png.write(to: URL(fileURLWithPath: fields[3]))
            }
            answer("ok\t\(cpuSpent)\t\(wallSpent)\t\(image.width)\t\(image.height)")
        } catch {
            answer("err\t\(String(describing: error).replacingOccurrences(of: "\n", with: " "))")
        }
    case "R":
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        answer("rss\t\(usage.ru_maxrss)")
    default:
        answer("err\tunknown request: \(line.prefix(80))")
    }
}
