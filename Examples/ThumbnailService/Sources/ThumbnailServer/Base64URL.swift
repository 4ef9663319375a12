import Foundation

/// URL-safe Base64 without padding (RFC 4648 §5), as imgproxy writes signatures and sources.
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes with or without padding; `nil` for anything outside the URL-safe alphabet.
    static func decode(_ text: Substring) -> [UInt8]? {
        var standard = ""
        standard.reserveCapacity(text.utf8.count + 3)
        for character in text.unicodeScalars {
            switch character {
            case "-": standard.append("+")
            case "_": standard.append("/")
            case "+", "/": return nil
            case "=": continue
            default: standard.unicodeScalars.append(character)
            }
        }
        while standard.utf8.count % 4 != 0 { standard.append("=") }
        return Data(base64Encoded: standard).map(Array.init)
    }
}
