#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

/// What the host asks a helper to decode with: the context's options and the per-decode limits.
struct IsolatedDecodeRequest: Sendable {
    var targetSize: ImageSize?
    var contentMode: ImageDecodingContext.ContentMode
    var prefersHighBitDepth: Bool
    var isStrict: Bool
    var prefersPremultipliedAlpha: Bool
    var prefersFastScaling: Bool
    var wantsPreviews: Bool
    /// The helper keeps the animation after the final image and serves its frames.
    var servesFrames: Bool
    var limits: ImageLimits
    /// CPU seconds for this decode (0: no limit).
    var cpuSeconds: Int
    /// The helper's address space during this decode, in bytes (0: no limit).
    var addressSpace: Int
    /// The context's decode options that linked codecs declare (a TIFF's page, an SVG's DPI),
    /// by `userInfo` key: integers, numbers, flags and text.
    var options: [String: any Sendable] = [:]
    /// The colour the host's plan chose (``ImageDecodingContext/colorConversion``, the registry's
    /// CMYK rule applied by the host): a CMYK JPEG converts as it decodes, so in the helper. The
    /// helper applies no colour rule of its own.
    var colorConversion: ImageColorTarget?

    /// At most this many options cross the wire.
    static let maximumOptions = 64

    /// The `userInfo` keys of the options the linked codecs declare.
    static let declaredOptionKeys = Set(ImageCodec.linkedDecodingOptions.map(\.key))

    init(context: ImageDecodingContext, limits: IsolationLimits, wantsPreviews: Bool, servesFrames: Bool) {
        targetSize = context.targetSize
        contentMode = context.contentMode
        prefersHighBitDepth = context.prefersHighBitDepth
        isStrict = context.isStrict
        prefersPremultipliedAlpha = context.prefersPremultipliedAlpha
        colorConversion = context.colorConversion
        prefersFastScaling = context.prefersFastScaling
        self.wantsPreviews = wantsPreviews
        self.servesFrames = servesFrames
        self.limits = context.limits
        cpuSeconds = limits.cpuTime.map { max(1, Int(($0.components.seconds) + ($0.components.attoseconds > 0 ? 1 : 0))) } ?? 0
        addressSpace = limits.addressSpace ?? 0
        options = context.userInfo.filter { Self.declaredOptionKeys.contains($0.key) && ($0.value is Int || $0.value is Double || $0.value is Bool || $0.value is String) }
    }

    func encoded() -> Data {
        var w = WireWriter()
        w.int(targetSize?.width ?? 0)
        w.int(targetSize?.height ?? 0)
        w.bool(contentMode == .aspectFit)
        w.bool(prefersHighBitDepth)
        w.bool(isStrict)
        w.bool(prefersPremultipliedAlpha)
        w.bool(prefersFastScaling)
        w.bool(wantsPreviews)
        w.bool(servesFrames)
        for value in [limits.maxPixelCount, limits.maxDimension, limits.maxFrameCount, limits.maxDecodedBytes,
                      limits.maxScanCount, limits.maxMetadataBytes, limits.maxDecodedBytesPerInputByte] { w.int(value) }
        // The codecs' own limits: the preset the others follow, and those set.
        w.int(limits.preset.rawValue)
        let codecValues = limits.codecValues.sorted { $0.key < $1.key }.prefix(Self.maximumOptions)
        w.int(codecValues.count)
        for (name, value) in codecValues {
            w.string(name)
            w.int(value)
        }
        w.int(cpuSeconds)
        w.int(addressSpace)
        let shown = options.sorted { $0.key < $1.key }.prefix(Self.maximumOptions)
        w.int(shown.count)
        for (key, value) in shown {
            w.string(key)
            switch value {
            case let value as Int: w.int(1); w.int(value)
            case let value as Double: w.int(2); w.double(value)
            case let value as Bool: w.int(3); w.bool(value)
            case let value as String: w.int(4); w.string(value)
            default: w.int(0)
            }
        }
        switch colorConversion {
        case nil: w.int(0)
        case .sRGB?: w.int(1)
        case .profile(let profile)?: w.int(2); w.bytes(profile)
        }
        return w.data
    }

    init(decoding data: Data) throws(WireReader.Malformed) {
        var r = WireReader(data)
        let width = try r.int(), height = try r.int()
        targetSize = width > 0 && height > 0 ? ImageSize(width: width, height: height) : nil
        contentMode = try r.bool() ? .aspectFit : .aspectFill
        prefersHighBitDepth = try r.bool()
        isStrict = try r.bool()
        prefersPremultipliedAlpha = try r.bool()
        prefersFastScaling = try r.bool()
        wantsPreviews = try r.bool()
        servesFrames = try r.bool()
        limits = ImageLimits(
            maxPixelCount: try r.int(), maxDimension: try r.int(), maxFrameCount: try r.int(), maxDecodedBytes: try r.int(),
            maxScanCount: try r.int(), maxMetadataBytes: try r.int(), maxDecodedBytesPerInputByte: try r.int()
        )
        guard let preset = ImageLimits.Preset(rawValue: try r.int()) else { throw WireReader.Malformed("an unknown limits preset") }
        limits.preset = preset
        let keyCount = try r.int()
        guard (0...Self.maximumOptions).contains(keyCount) else { throw WireReader.Malformed("\(keyCount) codec limits") }
        for _ in 0..<keyCount {
            guard let name = try r.string() else { throw WireReader.Malformed("a codec limit without a name") }
            let value = try r.int()
            limits[ImageLimits.Key(name: name, defaultValue: value, untrustedValue: value)] = value
        }
        cpuSeconds = try r.int()
        addressSpace = try r.int()
        let count = try r.int()
        guard (0...Self.maximumOptions).contains(count) else { throw WireReader.Malformed("\(count) decode options") }
        for _ in 0..<count {
            guard let key = try r.string() else { throw WireReader.Malformed("a decode option without a key") }
            switch try r.int() {
            case 1: options[key] = try r.int()
            case 2: options[key] = try r.double()
            case 3: options[key] = try r.bool()
            case 4: options[key] = try r.string() ?? ""
            default: continue
            }
        }
        // Absent from a request of an older host: none.
        switch r.isAtEnd ? 0 : try r.int() {
        case 0: colorConversion = nil
        case 1: colorConversion = .sRGB
        case 2:
            guard let profile = try r.bytes(), profile.count <= limits.maxMetadataBytes else { throw WireReader.Malformed("a colour profile") }
            colorConversion = .profile(profile)
        default: throw WireReader.Malformed("an unknown colour target")
        }
    }

    /// The context the helper decodes with.
    func context(data: Data, allocator: PixelAllocator) -> ImageDecodingContext {
        var context = ImageDecodingContext(data: data, isCompleted: false, targetSize: targetSize, contentMode: contentMode,
                                           prefersHighBitDepth: prefersHighBitDepth, limits: limits, allocator: allocator, isStrict: isStrict)
        context.prefersPremultipliedAlpha = prefersPremultipliedAlpha
        context.prefersFastScaling = prefersFastScaling
        context.colorConversion = colorConversion
        context.managesUncarriedColor = false
        context.userInfo.merge(options) { $1 }
        return context
    }
}

extension ImageHeader {
    func encoded() -> Data {
        var w = WireWriter()
        w.string(type.rawValue)
        w.int(width)
        w.int(height)
        w.int(bitDepth ?? -1)
        w.int(componentCount ?? -1)
        w.int(hasAlpha.map { $0 ? 1 : 0 } ?? -1)
        w.bool(isProgressive)
        w.int(frameCount ?? -1)
        w.bool(isAnimated)
        w.int(orientation.map { Int($0.rawValue) } ?? -1)
        return w.data
    }

    /// Reads a helper's header, every field by its ``WireField`` rule.
    init(decoding data: Data, limits: ImageLimits, expected: ImageType?) throws(WireReader.Malformed) {
        var r = WireReader(data)
        let type = try WireRules.type(try r.string() ?? "", .headerType, expected: expected) ?? ImageType(rawValue: "")
        let width = try r.int(), height = try r.int()
        try WireBounds(limits).check(width: width, height: height)
        let bitDepth = try WireRules.optional(try r.int(), in: 1...32, .headerBitDepth)
        let components = try WireRules.optional(try r.int(), in: 1...8, .headerComponentCount)
        let alpha = try WireRules.optional(try r.int(), in: 0...1, .headerAlpha)
        let progressive = try r.bool()
        let frames = try WireRules.optional(try r.int(), in: 0...max(0, limits.maxFrameCount), .headerFrameCount)
        let animated = try r.bool()
        let orientationValue = try r.int()
        let orientation = orientationValue == -1 ? nil : try WireRules.orientation(orientationValue, .headerOrientation)
        self.init(
            type: type, width: width, height: height, bitDepth: bitDepth, componentCount: components, hasAlpha: alpha.map { $0 == 1 },
            isProgressive: progressive, frameCount: frames, isAnimated: animated, orientation: orientation
        )
    }
}

extension ImageCodecError {
    func encoded() -> Data {
        var w = WireWriter()
        w.string(code.rawValue)
        w.string(stage.rawValue)
        w.string(format?.rawValue)
        w.string(codec)
        w.string(message)
        return w.data
    }

    /// Reads a decoder's failure as a helper reported it: the code and stage by their
    /// ``WireField`` rules; the codec's name and the text are the helper's words, returned apart
    /// (``helperText``) for the log, never in the error.
    init(decoding data: Data, expected: ImageType?, codec: String, helperText: inout String) throws(WireReader.Malformed) {
        var r = WireReader(data)
        let codeValue = Code(rawValue: try r.string() ?? "")
        let code = WireRules.decoderCodes.contains(codeValue) ? codeValue : .decoderFailed
        let stageValue = Stage(rawValue: try r.string() ?? "")
        let stage = WireRules.stages.contains(stageValue) ? stageValue : .decoding
        let format = try WireRules.type(try r.string(), .errorFormat, expected: expected)
        let helperCodec = try r.string() ?? ""
        helperText = "\(helperCodec): \(try r.string() ?? "")"
        let subject = (format ?? expected).map { "the \($0.name) " } ?? "the "
        self.init(code, stage: stage, format: format ?? expected, codec: codec,
                  message: "\(subject)decoder in the helper reported \(code.rawValue) at \(stage.rawValue) (its own text is in the log)")
    }
}

/// An image crossing the process boundary: everything but the pixels, which travel as a
/// shared-memory file descriptor.
struct WireImage {
    var width: Int
    var height: Int
    var pixelFormat: PixelFormat
    var alphaMode: AlphaMode
    var bytesPerRow: Int
    var byteCount: Int
    var type: ImageType?
    var isPreview: Bool
    var orientation: ImageOrientation
    var colorInfo: ColorInfo
    var loopCount: Int
    var duration: Double?
    var exif: Data?
    var xmp: Data?
    var userInfo: [ImageContainer.UserInfoKey: any Sendable]
    var animation: WireAnimation?

    init(container: ImageContainer) {
        let image = container.image
        let bitmap = image.bitmap
        width = bitmap.width
        height = bitmap.height
        pixelFormat = bitmap.pixelFormat
        alphaMode = bitmap.alphaMode
        bytesPerRow = bitmap.bytesPerRow
        byteCount = bitmap.bytesPerRow * bitmap.height
        type = container.type
        isPreview = container.isPreview
        orientation = image.orientation
        colorInfo = image.colorInfo
        loopCount = image.loopCount
        duration = image.frames[0].duration
        exif = image.exif
        xmp = image.xmp
        userInfo = container.userInfo
        if let animation = container.animation {
            // Frames are decoded on demand in a helper (IsolatedFrameDecoder): the host gets the
            // first one and the animation's description.
            userInfo[.frameCountKey] = animation.frameCount
            loopCount = animation.loopCount
            self.animation = WireAnimation(animation)
        }
    }

    func encoded() -> Data {
        var w = WireWriter()
        w.int(width)
        w.int(height)
        w.int(pixelFormat.channelCount)
        w.int(pixelFormat.bitsPerChannel)
        w.string(alphaMode.rawValue)
        w.int(bytesPerRow)
        w.int(byteCount)
        w.string(type?.rawValue)
        w.bool(isPreview)
        w.int(Int(orientation.rawValue))
        w.bytes(colorInfo.iccProfile)
        w.double(colorInfo.gamma ?? -1)
        w.int(colorInfo.sRGBIntent ?? -1)
        w.int(loopCount)
        w.double(duration ?? -1)
        w.bytes(exif)
        w.bytes(xmp)
        // userInfo: the values a plain-data encoding can carry.
        var entries: [(String, UInt8, WireWriter)] = []
        for (key, value) in userInfo {
            var v = WireWriter()
            switch value {
            case let value as Int: v.int(value); entries.append((key.rawValue, 1, v))
            case let value as Double: v.double(value); entries.append((key.rawValue, 2, v))
            case let value as Bool: v.bool(value); entries.append((key.rawValue, 3, v))
            case let value as String: v.string(WireRules.asciiText(value)); entries.append((key.rawValue, 4, v))
            case let value as ImageSize: v.int(value.width); v.int(value.height); entries.append((key.rawValue, 5, v))
            case let value as [Int]: v.int(value.count); value.forEach { v.int($0) }; entries.append((key.rawValue, 6, v))
            case let value as [Double]: v.int(value.count); value.forEach { v.double($0) }; entries.append((key.rawValue, 7, v))
            default: continue
            }
        }
        w.int(entries.count)
        for (key, tag, value) in entries {
            w.string(key)
            w.int(Int(tag))
            w.bytes(value.data)
        }
        w.bytes(animation?.encoded())
        return w.data
    }

    /// Reads an image's description and checks it against the decode's `limits` before anything
    /// is allocated for it: a helper's word is never taken for sizes.
    init(decoding data: Data, limits: ImageLimits, expected: ImageType?) throws(WireReader.Malformed) {
        var r = WireReader(data)
        width = try r.int()
        height = try r.int()
        guard let channels = PixelFormat.Channels(rawValue: try r.int()) else { throw WireReader.Malformed("an unknown pixel format") }
        let bits = try r.int()
        guard bits == 8 || bits == 16 else { throw WireReader.Malformed("\(bits)-bit samples") }
        pixelFormat = PixelFormat(channels: channels, bitsPerChannel: bits)
        try WireBounds(limits).check(width: width, height: height)
        guard let alpha = AlphaMode(rawValue: try r.string() ?? "") else { throw WireReader.Malformed("an unknown alpha mode") }
        alphaMode = alpha
        bytesPerRow = try r.int()
        byteCount = try r.int()
        let row = width.multipliedReportingOverflow(by: pixelFormat.bytesPerPixel)
        let total = bytesPerRow.multipliedReportingOverflow(by: height)
        // Rows may be padded, but not past one more row's worth plus alignment.
        guard !row.overflow, bytesPerRow >= row.partialValue, bytesPerRow - row.partialValue <= row.partialValue + 64,
              !total.overflow, byteCount == total.partialValue else {
            throw WireReader.Malformed("\(byteCount) bytes in rows of \(bytesPerRow) for \(width) × \(height) pixels")
        }
        guard byteCount <= limits.maxDecodedBytes else {
            throw WireReader.Malformed("an image of \(byteCount) bytes, over the decode's limit of \(limits.maxDecodedBytes)")
        }
        type = try WireRules.type(try r.string(), .imageType, expected: expected)
        isPreview = try r.bool()
        orientation = try WireRules.orientation(try r.int(), .orientation)
        let icc = try r.bytes()
        let gamma = try WireRules.gamma(try r.double())
        let intent = try WireRules.optional(try r.int(), in: 0...3, .sRGBIntent)
        colorInfo = ColorInfo(iccProfile: icc, gamma: gamma, sRGBIntent: intent)
        loopCount = try WireRules.loopCount(try r.int())
        duration = try WireRules.duration(try r.double(), .duration)
        exif = try r.bytes()
        xmp = try r.bytes()
        for block in [icc, exif, xmp] where (block?.count ?? 0) > limits.maxMetadataBytes {
            throw WireReader.Malformed("\(block?.count ?? 0) bytes of metadata, over the decode's limit of \(limits.maxMetadataBytes)")
        }
        userInfo = [:]
        let count = try r.int()
        guard (0...WireRules.maximumUserInfoEntries).contains(count) else { throw WireRules.malformed(.userInfoCount, count) }
        for _ in 0..<count {
            let key = try WireRules.userInfoKey(try r.string())
            let tag = try r.int()
            var v = WireReader(try r.bytes() ?? Data())
            switch tag {
            case 1: userInfo[key] = try v.int()
            case 2: userInfo[key] = try WireRules.finite(try v.double(), .userInfoValue)
            case 3: userInfo[key] = try v.bool()
            case 4: userInfo[key] = try WireRules.userInfoString(try v.string())
            case 5:
                let size = ImageSize(width: try v.int(), height: try v.int())
                try WireBounds(limits).check(width: size.width, height: size.height)
                userInfo[key] = size
            case 6:
                let n = try v.int()
                guard n >= 0, n < 1000 else { throw WireReader.Malformed("a userInfo list of \(n)") }
                var values: [Int] = []
                for _ in 0..<n { values.append(try v.int()) }
                userInfo[key] = values
            case 7:
                let n = try v.int()
                guard n >= 0, n < 1000 else { throw WireReader.Malformed("a userInfo list of \(n)") }
                var values: [Double] = []
                for _ in 0..<n { values.append(try WireRules.finite(try v.double(), .userInfoValue)) }
                userInfo[key] = values
            default: throw WireRules.malformed(.userInfoValue, "of unknown kind \(tag)")
            }
        }
        animation = try r.bytes().map { data throws(WireReader.Malformed) in try WireAnimation(decoding: data, limits: limits) }
    }

    /// The container, over `storage` (the helper's pixels, mapped into this process).
    func container(storage: PixelStorage) -> ImageContainer {
        let bitmap = Bitmap(width: width, height: height, pixelFormat: pixelFormat, alphaMode: alphaMode, bytesPerRow: bytesPerRow, storage: storage)
        var image = Image(bitmap: bitmap, orientation: orientation, colorInfo: colorInfo, exif: exif)
        image.xmp = xmp
        image.loopCount = loopCount
        image.frames[0].duration = duration
        return ImageContainer(image: image, type: type, isPreview: isPreview, userInfo: userInfo)
    }
}

/// An animation's description: enough for the host to composite frames a helper decodes.
struct WireAnimation {
    var canvasSize: ImageSize
    var loopCount: Int
    var backgroundColor: [UInt8]?
    var frameInfos: [AnimationFrameInfo]

    init(_ animation: ImageAnimation) {
        canvasSize = animation.canvasSize
        loopCount = animation.loopCount
        backgroundColor = animation.backgroundColor
        frameInfos = animation.frameInfos
    }

    func encoded() -> Data {
        var w = WireWriter()
        w.int(canvasSize.width)
        w.int(canvasSize.height)
        w.int(loopCount)
        w.bytes(backgroundColor.map { Data($0) })
        w.int(frameInfos.count)
        for info in frameInfos {
            for value in [info.x, info.y, info.width, info.height] { w.int(value) }
            w.double(info.duration)
            w.int(info.disposal == .none ? 0 : info.disposal == .background ? 1 : 2)
            w.bool(info.blending == .over)
        }
        return w.data
    }

    init(decoding data: Data, limits: ImageLimits) throws(WireReader.Malformed) {
        var r = WireReader(data)
        canvasSize = ImageSize(width: try r.int(), height: try r.int())
        try WireBounds(limits).check(width: canvasSize.width, height: canvasSize.height)
        loopCount = try WireRules.loopCount(try r.int())
        backgroundColor = try r.bytes().map { [UInt8]($0) }
        guard (backgroundColor?.count ?? 0) <= 8 else { throw WireReader.Malformed("a background colour of \(backgroundColor?.count ?? 0) bytes") }
        let count = try r.int()
        // Each info takes 49 bytes on the wire.
        guard count >= 1, count <= data.count / 49, count <= limits.maxFrameCount else {
            throw WireReader.Malformed("an animation of \(count) frames (the decode's limit is \(limits.maxFrameCount))")
        }
        frameInfos = []
        frameInfos.reserveCapacity(count)
        for _ in 0..<count {
            let x = try r.int(), y = try r.int(), width = try r.int(), height = try r.int()
            let duration = try WireRules.duration(try r.double(), .frameDuration) ?? 0
            let disposal: AnimationFrameInfo.Disposal
            switch try r.int() {
            case 0: disposal = .none
            case 1: disposal = .background
            case 2: disposal = .previous
            default: throw WireReader.Malformed("an unknown frame disposal")
            }
            let blending: AnimationFrameInfo.Blending = try r.bool() ? .over : .source
            // A frame may reach past the canvas (the compositor clips it, as browsers do), but it
            // is an image of its own, within the decode's limits.
            try WireBounds(limits).check(width: width, height: height)
            guard (0...Int(UInt32.max)).contains(x), (0...Int(UInt32.max)).contains(y) else {
                throw WireRules.malformed(.frameRectangle, "at \(x), \(y)")
            }
            frameInfos.append(AnimationFrameInfo(x: x, y: y, width: width, height: height, duration: duration,
                                                 disposal: disposal, blending: blending))
        }
    }
}

/// Sizes a helper reports, checked against the decode's limits with arithmetic that cannot trap.
struct WireBounds {
    var limits: ImageLimits

    init(_ limits: ImageLimits) {
        self.limits = limits
    }

    func check(width: Int, height: Int) throws(WireReader.Malformed) {
        let pixels = width.multipliedReportingOverflow(by: height)
        guard width >= 0, height >= 0, width <= limits.maxDimension, height <= limits.maxDimension,
              !pixels.overflow, pixels.partialValue <= limits.maxPixelCount else {
            throw WireReader.Malformed("an image of \(width) × \(height) pixels, beyond the decode's limits")
        }
    }

    /// The longest message a helper may send of `kind` during a decode with these limits: the
    /// image descriptions carry at most three metadata blocks and one frame description per frame.
    func maximumPayload(_ kind: WireMessage.Kind) -> Int {
        switch kind {
        case .needsMoreData: return 0
        case .allocate: return 8   // one integer: the bytes asked for
        case .header, .failure, .ready: return 64 << 10
        case .preview, .final:
            let metadata = min(limits.maxMetadataBytes, 256 << 20).multipliedReportingOverflow(by: 3)
            let frames = min(limits.maxFrameCount, 1 << 20) * 49
            return metadata.overflow ? Int(UInt32.max) : min(Int(UInt32.max), metadata.partialValue + frames + (1 << 20))
        default: return 0
        }
    }
}

extension SandboxStatus {
    func encoded() -> Data {
        var w = WireWriter()
        w.bool(systemCallFilter)
        w.bool(filesByLandlock)
        w.int(landlockABI)
        w.bool(networkByLandlock)
        w.bool(scopesByLandlock)
        w.bool(capabilitiesDropped)
        w.bool(leftRoot)
        w.int(Int(userID))
        w.int(Int(groupID))
        w.string(failure)
        w.int(unreadablePaths.count)
        unreadablePaths.forEach { w.string($0) }
        w.int(threadCap)
        w.bool(threadCapPerHelper)
        return w.data
    }

    init(decoding data: Data) throws(WireReader.Malformed) {
        var r = WireReader(data)
        self.init(systemCallFilter: try r.bool(), filesByLandlock: try r.bool(), landlockABI: try r.int(),
                  networkByLandlock: try r.bool(), scopesByLandlock: try r.bool(), capabilitiesDropped: try r.bool(),
                  leftRoot: try r.bool(), userID: UInt32(truncatingIfNeeded: try r.int()), groupID: UInt32(truncatingIfNeeded: try r.int()),
                  failure: try r.string())
        // Older helpers (and the tests' fake one) end here.
        guard !r.isAtEnd else { return }
        let count = try r.int()
        guard (0...WireRules.maximumUnreadablePaths).contains(count) else { throw WireRules.malformed(.unreadablePath, "\(count) paths") }
        for _ in 0..<count { unreadablePaths.append(try WireRules.path(try r.string())) }
        guard !r.isAtEnd else { return }
        let cap = try r.int()
        guard (0...WireRules.maximumThreadCap).contains(cap) else { throw WireRules.malformed(.threadCap, cap) }
        threadCap = cap
        threadCapPerHelper = try r.bool()
    }
}
