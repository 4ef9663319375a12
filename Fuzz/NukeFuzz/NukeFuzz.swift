import CNukeFuzzSupport
import Foundation
import NukeBMP
import NukeColor
import NukeCore
import NukePixels
import NukeGIF
import NukeHEIF
import NukeICO
import NukeJPEG
import NukeJXL
@_spi(Fuzzing) import NukeIsolation
import NukePNG
import NukeSVG
import NukeTIFF
import NukeWebP
import NukeXBM

/// Fuzz targets for every codec product and for the registry, in one program.
///
///     NUKE_FUZZ_TARGET=jpeg NukeFuzz [libFuzzer options] [corpus directories]
///
/// Targets: jpeg, png, gif, webp, heif, svg, tiff, bmp, ico (ICO and CUR), xbm, jxl (each: one-shot decode, chunked progressive decode
/// with chunk sizes taken from the input, decode to a small target size, encode of the decoded
/// image where the codec encodes) and registry (sniffing and dispatch over every codec).
/// scripts/fuzz.sh builds it with libFuzzer and AddressSanitizer and runs a target for a time.
@main
enum NukeFuzz {
    /// The target named by NUKE_FUZZ_TARGET (default: registry).
    static let targetName = ProcessInfo.processInfo.environment["NUKE_FUZZ_TARGET"] ?? "registry"
    static let target = Target(rawValue: targetName) ?? .registry
    static let registry = ImageDecoderRegistry(codecs: target.codecs)

    enum Target: String, CaseIterable, Sendable {
        case jpeg, png, gif, webp, heif, svg, tiff, bmp, ico, xbm, jxl, registry, wire

        var codecs: [ImageCodec] {
            switch self {
            case .jpeg: [.jpeg]
            case .png: [.png]
            case .gif: [.gif]
            case .webp: [.webp]
            case .heif: [.heic, .heif, .avif]
            case .svg: [.svg]
            case .tiff: [.tiff]
            case .bmp: [.bmp]
            case .ico: [.ico, .cur, .png]   // PNG entries go to the registry's PNG decoder
            case .xbm: [.xbm]
            case .jxl: [.jxl]
            case .registry: ImageCodecs.linked
            case .wire: []
            }
        }
    }

    static func main() {
        guard Target(rawValue: targetName) != nil else {
            FileHandle.standardError.write(Data("NukeFuzz: unknown target \(targetName); one of \(Target.allCases.map(\.rawValue))\n".utf8))
            exit(2)
        }
        _ = registry
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            NukeFuzz.fuzz(Data(bytes: data, count: size))
            return 0
        })
    }

    /// Small limits: the fuzzer looks for bugs in code paths, not for big allocations.
    static let limits = ImageLimits(maxPixelCount: 4_000_000, maxDimension: 8_192, maxFrameCount: 64, maxDecodedBytes: 64 << 20,
                                    maxScanCount: 64, maxMetadataBytes: 1 << 20, maxDecodedBytesPerInputByte: .max)

    static func fuzz(_ data: Data) {
        if target == .wire { return fuzzWire(data) }
        var context = registry.makeContext(for: data)
        context.limits = limits
        // One-shot.
        let decoded = try? registry.decode(context)
        // Chunked, with chunk sizes from the input's bytes (1…256), previews drained after each.
        if var (decoder, _) = registry.incrementalDecoder(for: ImageDecodingContext(data: data.prefix(64), isCompleted: false, limits: limits)) {
            var offset = 0
            var index = 0
            outer: while offset < data.count {
                let size = 1 + Int(data[data.startIndex + index % data.count])
                index += 1
                let end = min(data.count, offset + size)
                decoder.push(data[(data.startIndex + offset)..<(data.startIndex + end)])
                offset = end
                if offset == data.count { decoder.finish() }
                while true {
                    guard let event = try? decoder.next() else { break outer }
                    if case .needsMoreData = event { break }
                    if case .final = event { break outer }
                }
            }
        }
        // Read in pieces, rows handed to a sink as they are decoded (JPEG streams them in bands).
        var read = min(64, data.count)
        _ = try? registry.decode(ImageDecodingContext(data: data.prefix(64), limits: limits), reading: {
            guard read < data.count else { return nil }
            defer { read = min(data.count, read + 97) }
            return data[(data.startIndex + read)..<(data.startIndex + min(data.count, read + 97))]
        }, rowsTo: RowChecker())
        // Decode to a small size: whole, and read in pieces (a progressive JPEG at 1/8 drops
        // scans and ends early, JPEGScanFilter).
        context.targetSize = ImageSize(width: 17, height: 13)
        _ = try? registry.decode(context)
        read = min(64, data.count)
        _ = try? registry.decode(ImageDecodingContext(data: data.prefix(64), targetSize: context.targetSize, limits: limits), reading: {
            guard read < data.count else { return nil }
            defer { read = min(data.count, read + 61) }
            return data[(data.startIndex + read)..<(data.startIndex + min(data.count, read + 61))]
        })
        // The output stage on the file's own orientation and colour (ICC, nclx, CMYK through
        // NukeColor's lcms2), premultiplied.
        context.appliesOrientation = true
        context.colorConversion = .sRGB
        context.prefersPremultipliedAlpha = true
        let finished = try? registry.decode(context)
        // EXIF edits on whatever the input holds, and the metadata each policy writes.
        if var block = ExifBlock(data) {
            block.removeLocation()
            block.setOrientation(.up)
        }
        if let image = (decoded ?? finished)?.image {
            for policy in [ImageMetadataPolicy.allButLocation, .display] {
                _ = image.metadataToWrite(options: ImageEncodingOptions(metadata: policy), writesGray: image.bitmap.pixelFormat.isGray)
            }
        }
        // Animations: a few frames, lazily.
        if let animation = decoded?.animation, let iterator = try? animation.makeIterator() {
            for _ in 0..<4 { guard (try? iterator.next()) != nil else { break } }
        }
        // Encode what decoded, in the same format.
        if let decoded, let type = decoded.type, let codec = target.codecs.first(where: { $0.info.type == type }),
           let makeEncoder = codec.makeEncoder, decoded.image.width * decoded.image.height <= 1 << 16 {
            _ = try? makeEncoder(ImageEncodingOptions(quality: 0.5, metadata: .allButLocation)).encode(decoded.image)
        }
    }
}

extension NukeFuzz {
    static let encoders: [any ImageEncoding] = [
        ImageEncoders.PNG(), ImageEncoders.GIF(), ImageEncoders.WebP(), ImageEncoders.JPEG(), ImageEncoders.JXL(), ImageEncoders.TIFF(),
        ImageEncoders.BMP(),
    ]

    /// A helper conversation, as a compromised helper could write it, sent over a real socket
    /// pair with descriptors attached (/dev/null, a memfd, a pipe, the socket), read by the host's
    /// own reader (WireFuzzing) and everything it accepts passed downstream: the output stage, every
    /// encoder, and animations with the frame durations and loop count the helper described.
    static func fuzzWire(_ data: Data) {
        let accepted = WireFuzzing.read(data) { socket, bytes, descriptors in
            bytes.withUnsafeBytes { nukefuzz_send_with_descriptors(socket, $0.baseAddress!, $0.count, Int32(descriptors)) }
        }
        for header in accepted.headers { _ = header.description }
        for error in accepted.errors { _ = error.description }
        for container in accepted.images {
            // The output stage a decode would apply (orientation, colour through lcms2).
            var finished = container
            var context = ImageDecodingContext(data: Data(), limits: limits)
            context.appliesOrientation = true
            context.colorConversion = .sRGB
            try? finished.finishOutputStage(for: context)
            for encoder in encoders { _ = try? encoder.encode(container.image) }
            let image = finished.image
            _ = image.metadataToWrite(options: ImageEncodingOptions(metadata: .allButLocation), writesGray: image.bitmap.pixelFormat.isGray)
        }
        for animation in accepted.animations.prefix(2) {
            let frames = animation.durations.prefix(4).map { duration in
                ImageFrame(bitmap: Bitmap(width: 2, height: 2, pixelFormat: .rgba8, bytes: [UInt8](repeating: 9, count: 16)), duration: duration)
            }
            guard !frames.isEmpty else { continue }
            let image = Image(frames: frames, loopCount: animation.loopCount)
            for encoder in encoders.prefix(5) { _ = try? encoder.encode(image) }
        }
    }
}

/// A row sink that reads every byte it is given and checks the rows fit what `begin` announced.
final class RowChecker: ImageRowSink {
    private var rowBytes = 0
    private var rowsLeft = 0
    private var checksum: UInt8 = 0

    func begin(width: Int, height: Int, pixelFormat: PixelFormat, alphaMode: AlphaMode) throws(ImageCodecError) {
        rowBytes = width * pixelFormat.bytesPerPixel
        rowsLeft = height
    }

    func write(rows: UnsafeRawBufferPointer, count: Int, bytesPerRow: Int) throws(ImageCodecError) {
        precondition(count <= rowsLeft && bytesPerRow >= rowBytes && rows.count >= (count - 1) * bytesPerRow + rowBytes,
                     "a decoder handed the sink rows past what it announced")
        rowsLeft -= count
        for byte in rows { checksum &+= byte }
    }
}
