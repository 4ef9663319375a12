import Crypto
import Foundation

/// Signs and checks GET paths as imgproxy does: the signature is the URL-safe Base64 (unpadded)
/// HMAC-SHA256, under `key`, of `salt` followed by the path after the signature, its leading `/`
/// included. Nobody without the key can ask for other sizes or sources than those signed.
struct URLSigner: Sendable {
    /// `nil`: no key configured. (Bytes: swift-crypto 3's `SymmetricKey` is not `Sendable`.)
    let keyBytes: [UInt8]?
    let salt: [UInt8]
    /// Accept the literal signature `unsafe`; only ever true without a key.
    let allowsUnsigned: Bool

    init(key: [UInt8]?, salt: [UInt8] = [], allowsUnsigned: Bool = false) {
        keyBytes = key
        self.salt = salt
        self.allowsUnsigned = key == nil && allowsUnsigned
    }

    enum Verdict: Equatable {
        case valid
        /// The signature does not match (or is not the canonical Base64url of 32 bytes).
        case invalid
        /// `unsafe` while unsigned URLs are not allowed, or a signature with no key to check it.
        case notAccepted(String)
    }

    /// The signature of `path` (`/processing/source`), or `nil` without a key.
    func signature(for path: Substring) -> String? {
        guard let key = keyBytes.map({ SymmetricKey(data: $0) }) else { return nil }
        return Base64URL.encode(Array(mac(path, key: key)))
    }

    /// Checks `signature` against `path` in constant time.
    func verify(signature: Substring, path: Substring) -> Verdict {
        guard let key = keyBytes.map({ SymmetricKey(data: $0) }) else {
            if signature == "unsafe" {
                return allowsUnsigned ? .valid : .notAccepted("unsigned URLs are not allowed (no signing key is configured and --allow-unsigned is off)")
            }
            return .notAccepted("no signing key is configured")
        }
        // One spelling per signature: unpadded, the last character's unused bits zero. Base64
        // decoders also take `…=` and three other last characters for the same bytes, and each
        // spelling would be a CDN cache key of its own.
        guard let given = Base64URL.decode(signature), given.count == SHA256.byteCount,
              Base64URL.encode(given).utf8.elementsEqual(signature.utf8) else { return .invalid }
        // HMAC's isValidAuthenticationCode compares in constant time.
        var message = salt
        message.append(contentsOf: path.utf8)
        return HMAC<SHA256>.isValidAuthenticationCode(given, authenticating: message, using: key) ? .valid : .invalid
    }

    private func mac(_ path: Substring, key: SymmetricKey) -> HashedAuthenticationCode<SHA256> {
        var message = salt
        message.append(contentsOf: path.utf8)
        return HMAC<SHA256>.authenticationCode(for: message, using: key)
    }
}
