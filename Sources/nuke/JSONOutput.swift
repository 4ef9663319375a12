import Foundation

/// Prints JSON with sorted keys, so output is stable for scripts and tests.
enum JSONOutput {
    /// Prints a JSON object or array built from dictionaries, arrays, strings, numbers,
    /// booleans and `NSNull`.
    static func print(_ value: Any) {
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) else {
            preconditionFailure("not a JSON value: \(value)")
        }
        Swift.print(String(decoding: data, as: UTF8.self))
    }

    /// The value or JSON `null`.
    static func orNull(_ value: Any?) -> Any {
        value ?? NSNull()
    }
}
