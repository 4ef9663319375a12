#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

/// The checks behind ``WireField``'s rules, with arithmetic and conversions that cannot trap.
/// Each throws ``WireReader/Malformed`` naming the field and the value.
enum WireRules {
    static let maximumTypeLength = 128
    static let maximumGamma = 100.0
    static let maximumLoopCount = Int(UInt32.max)
    /// The longest delay any format we decode can hold (APNG's), as encoders clamp to.
    static let maximumDuration = AnimationFrameInfo.maximumStorableDuration
    static let maximumUserInfoEntries = 64
    static let maximumKeyLength = 64
    static let maximumValueLength = 256
    static let maximumLoggedText = 512
    static let maximumUnreadablePaths = 16
    /// RLIMIT_NPROC a helper may report (Linux's own ceiling for threads is 4 million; a cap is far below).
    static let maximumThreadCap = 1 << 20
    static let maximumPathLength = 256

    /// An absolute path of printable ASCII, for the operator's status line.
    static func path(_ raw: String?) throws(WireReader.Malformed) -> String {
        guard let raw, raw.hasPrefix("/"), raw.utf8.count <= maximumPathLength, raw.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw malformed(.unreadablePath, raw.map { "\($0.utf8.count) bytes" } ?? "nil")
        }
        return raw
    }

    static func malformed(_ field: WireField, _ value: some CustomStringConvertible) -> WireReader.Malformed {
        WireReader.Malformed("\(field.rawValue) \(String(describing: value).prefix(64)): not \(field.rule)")
    }

    /// A format the host knows (built in or registered), that its registry decodes, or the one the
    /// request named.
    static func type(_ raw: String?, _ field: WireField, expected: ImageType?) throws(WireReader.Malformed) -> ImageType? {
        guard let raw else { return nil }
        guard raw.utf8.count <= maximumTypeLength else { throw malformed(field, "of \(raw.utf8.count) bytes") }
        let type = ImageType(rawValue: raw)
        if type == expected || type.isKnown { return type }
        guard ImageDecoderRegistry.shared.registeredCodecs.contains(where: { $0.type == type }) else { throw malformed(field, raw) }
        return type
    }

    /// `-1` for absent, else within `range`.
    static func optional(_ value: Int, in range: ClosedRange<Int>, _ field: WireField) throws(WireReader.Malformed) -> Int? {
        if value == -1 { return nil }
        guard range.contains(value) else { throw malformed(field, value) }
        return value
    }

    static func orientation(_ value: Int, _ field: WireField) throws(WireReader.Malformed) -> ImageOrientation {
        guard (1...8).contains(value), let orientation = ImageOrientation(rawValue: UInt8(value)) else { throw malformed(field, value) }
        return orientation
    }

    static func gamma(_ value: Double) throws(WireReader.Malformed) -> Double? {
        if value == -1 { return nil }
        guard value.isFinite, value > 0, value <= maximumGamma else { throw malformed(.gamma, value) }
        return value
    }

    /// `-1` for absent (an image's duration), else finite within 0…``maximumDuration``.
    static func duration(_ value: Double, _ field: WireField) throws(WireReader.Malformed) -> Double? {
        if value == -1, field == .duration { return nil }
        guard value.isFinite, value >= 0, value <= maximumDuration else { throw malformed(field, value) }
        return value
    }

    static func loopCount(_ value: Int) throws(WireReader.Malformed) -> Int {
        guard (0...maximumLoopCount).contains(value) else { throw malformed(.loopCount, value) }
        return value
    }

    static func userInfoKey(_ raw: String?) throws(WireReader.Malformed) -> ImageContainer.UserInfoKey {
        guard let raw, !raw.isEmpty, raw.utf8.count <= maximumKeyLength,
              raw.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2E || $0 == 0x2D || $0 == 0x2F }) else {
            throw malformed(.userInfoKey, raw ?? "nil")
        }
        return ImageContainer.UserInfoKey(raw)
    }

    /// `text` as a helper sends it, within ``userInfoString(_:)``'s rule: an arrow (a colour
    /// conversion's summary, "CMYK profile → sRGB") as `->`, any other byte outside printable ASCII
    /// as `?`, at most ``maximumValueLength`` bytes.
    static func asciiText(_ text: String) -> String {
        var bytes: [UInt8] = []
        for scalar in text.unicodeScalars {
            if scalar == "\u{2192}" { bytes += Array("->".utf8) } else { bytes.append((0x20...0x7E).contains(scalar.value) ? UInt8(scalar.value) : 0x3F) }
        }
        return String(decoding: bytes.prefix(maximumValueLength), as: UTF8.self)
    }

    static func userInfoString(_ raw: String?) throws(WireReader.Malformed) -> String {
        guard let raw, raw.utf8.count <= maximumValueLength, raw.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw malformed(.userInfoValue, "a string")
        }
        return raw
    }

    static func finite(_ value: Double, _ field: WireField) throws(WireReader.Malformed) -> Double {
        guard value.isFinite else { throw malformed(field, value) }
        return value
    }

    /// The codes a decoder reports; anything else is `.decoderFailed`.
    static let decoderCodes: [ImageCodecError.Code] = [
        .incomplete, .corrupt, .unsupported, .limitExceeded, .noCodec, .cancelled, .internalFailure, .decoderFailed,
    ]
    static let stages: [ImageCodecError.Stage] = [.sniffing, .header, .decoding, .encoding, .registry]

    /// A helper's own text, for the log: at most ``maximumLoggedText`` bytes, control characters
    /// and everything past ASCII escaped, so that it can forge no log line.
    static func escaped(_ text: String) -> String {
        var out = ""
        for byte in text.utf8.prefix(maximumLoggedText) {
            switch byte {
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x20...0x7E: out.append(Character(UnicodeScalar(byte)))
            default: out += "\\x" + String(byte, radix: 16, uppercase: false).leftPadded(to: 2)
            }
        }
        if text.utf8.count > maximumLoggedText { out += "…" }
        return out
    }
}

private extension String {
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
