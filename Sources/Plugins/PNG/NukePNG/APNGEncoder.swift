#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit
import NukePixels
internal import CPNGShim

extension ImageEncoders.PNG: AnimatedImageEncoding {
    /// Encodes an animation as APNG, drawing its frames one at a time from an iterator.
    ///
    /// Every frame is written whole (the canvas size, at 0,0) with `APNG_DISPOSE_OP_NONE` and
    /// `APNG_BLEND_OP_SOURCE`: exact, and each frame independent, at the cost of larger files than
    /// an encoder that writes only the changed rectangles. Durations are written in milliseconds
    /// (hundredths above 65 s), the loop count as `num_plays`.
    ///
    /// - Throws: `ImageCodecError`: the frame decoder's errors, or `.encodingFailed`.
    public func encode(_ animation: ImageAnimation) throws -> Data {
        let iterator = try animation.makeIterator()
        var writer = APNGWriter(frameCount: animation.frameCount, loopCount: animation.loopCount, encoder: self)
        while let frame = try iterator.next() {
            try writer.append(frame.canvas, duration: frame.info.duration)
        }
        return try writer.finish()
    }

    /// Encodes an animation as APNG into `stream`, one frame at a time: each frame's chunks go
    /// to the stream once it is encoded (the frame count is known up front, so nothing is
    /// written over), and neither the frames nor the file are held.
    ///
    /// - Throws: As ``encode(_:)-(ImageAnimation)``, or the stream's error.
    public func encode(_ animation: ImageAnimation, to stream: inout some SeekableImageOutputStream) throws {
        let iterator = try animation.makeIterator()
        var writer = APNGWriter(frameCount: animation.frameCount, loopCount: animation.loopCount, encoder: self)
        while let frame = try iterator.next() {
            try writer.append(frame.canvas, duration: frame.info.duration)
            try writer.takeOutput().withUnsafeBytes { try stream.write($0) }
        }
        try writer.finish().withUnsafeBytes { try stream.write($0) }
    }

    /// The eager form: an ``NukeCore/Image`` with several frames becomes an APNG.
    func encodeAnimated(_ image: Image) throws -> Data {
        var writer = APNGWriter(frameCount: image.frames.count, loopCount: image.loopCount, encoder: self)
        for frame in image.frames {
            try writer.append(frame.bitmap, duration: frame.duration ?? 0)
        }
        return try writer.finish()
    }
}

/// Builds an APNG from frames encoded one by one as standalone PNGs: the first frame's `IDAT`
/// chunks are the default image, the others become `fdAT` chunks.
struct APNGWriter {
    private let frameCount: Int
    private let loopCount: Int
    private let encoder: ImageEncoders.PNG
    private var output = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    private var sequence: UInt32 = 0
    private var canvas: ImageSize?
    private var written = 0

    init(frameCount: Int, loopCount: Int, encoder: ImageEncoders.PNG) {
        self.frameCount = frameCount
        self.loopCount = loopCount
        var options = encoder.options
        options.isProgressive = false
        self.encoder = ImageEncoders.PNG(options: options)
    }

    mutating func append(_ bitmap: Bitmap, duration: Double) throws {
        // One colour type for every frame: straight RGBA, 8 bits.
        let frame = bitmap.pixelFormat == .rgba8 && bitmap.alphaMode != .premultiplied ? bitmap : bitmap.unpremultiplied().converted(to: .rgba8)
        let size = ImageSize(width: frame.width, height: frame.height)
        if let canvas, canvas != size {
            throw PNGLibrary.encodingError("APNG frame \(written) is \(size), the canvas \(canvas): frames must be whole canvases")
        }
        let png = try encoder.encode(Image(bitmap: frame))
        let chunks = Self.chunks(of: png)
        if canvas == nil {
            canvas = size
            for chunk in chunks where chunk.type == "IHDR" { Self.append(chunk.type, chunk.payload, to: &output) }
            Self.append("acTL", Self.be32(frameCount) + Self.be32(loopCount), to: &output)
            for chunk in chunks where !["IHDR", "IDAT", "IEND"].contains(chunk.type) { Self.append(chunk.type, chunk.payload, to: &output) }
        }
        let (num, den) = Self.delay(duration)
        var fcTL = Self.be32(Int(sequence)) + Self.be32(size.width) + Self.be32(size.height) + Self.be32(0) + Self.be32(0)
        fcTL += [UInt8(num >> 8), UInt8(num & 0xFF), UInt8(den >> 8), UInt8(den & 0xFF), 0, 0]
        Self.append("fcTL", fcTL, to: &output)
        sequence += 1
        for chunk in chunks where chunk.type == "IDAT" {
            if written == 0 {
                Self.append("IDAT", chunk.payload, to: &output)
            } else {
                Self.append("fdAT", Self.be32(Int(sequence)) + chunk.payload, to: &output)
                sequence += 1
            }
        }
        written += 1
    }

    /// The bytes appended since the start or the last call, which no later frame changes.
    mutating func takeOutput() -> Data {
        defer { output = Data() }
        return output
    }

    /// Ends the file: the bytes not taken yet, and `IEND`.
    mutating func finish() throws -> Data {
        guard written == frameCount, written > 0 else {
            throw PNGLibrary.encodingError("APNG: \(written) frames written, \(frameCount) declared")
        }
        Self.append("IEND", [], to: &output)
        return output
    }

    /// A duration as APNG's delay fraction: milliseconds, or hundredths of a second above 65.5 s.
    static func delay(_ stored: Double) -> (Int, Int) {
        let seconds = AnimationFrameInfo.storableDuration(stored)
        let milliseconds = (seconds * 1000).rounded()
        if milliseconds <= 65_535 { return (Int(milliseconds), 1000) }
        return (min(65_535, Int((seconds * 100).rounded())), 100)
    }

    static func be32(_ value: Int) -> [UInt8] {
        [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    static func chunks(of png: Data) -> [(type: String, payload: [UInt8])] {
        let bytes = [UInt8](png)
        var result: [(String, [UInt8])] = []
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard offset + 12 + length <= bytes.count else { break }
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            result.append((type, Array(bytes[(offset + 8)..<(offset + 8 + length)])))
            offset += 12 + length
        }
        return result
    }

    static func append(_ type: String, _ payload: [UInt8], to out: inout Data) {
        switch type {
        case "IHDR": APNGStructure.appendChunk("IHDR", Data(payload), to: &out)
        case "IDAT": APNGStructure.appendChunk("IDAT", Data(payload), to: &out)
        case "fdAT": APNGStructure.appendChunk("fdAT", Data(payload), to: &out)
        case "fcTL": APNGStructure.appendChunk("fcTL", Data(payload), to: &out)
        case "acTL": APNGStructure.appendChunk("acTL", Data(payload), to: &out)
        case "IEND": APNGStructure.appendChunk("IEND", Data(payload), to: &out)
        default:
            // Ancillary chunks copied from the first frame's PNG (gAMA, sRGB, iCCP...).
            let bytes = Array(type.utf8)
            guard bytes.count == 4 else { return }
            out.append(contentsOf: be32(payload.count))
            out.append(contentsOf: bytes)
            out.append(contentsOf: payload)
            var crc = bytes.withUnsafeBufferPointer { nukepng_crc32(0, $0.baseAddress, $0.count) }
            crc = payload.withUnsafeBufferPointer { nukepng_crc32(crc, $0.baseAddress, $0.count) }
            out.append(contentsOf: be32(Int(crc)))
        }
    }
}
