import Testing
@testable import ThumbnailServer

@Suite struct URLSignerTests {
    // imgproxy's documented example key, salt and path; the signature is Python's
    // hmac.new(key, salt + path, sha256), Base64url without padding (an independent implementation).
    static let key = Hex.decode("943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881")!
    static let salt = Hex.decode("520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5")!
    static let path: Substring = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"

    @Test func signsAsImgproxyDoes() {
        let signer = URLSigner(key: Self.key, salt: Self.salt)
        #expect(signer.signature(for: Self.path) == "90UxdwGRAI2bpLSHKkZculJau5ahfxfS0h3fMuQAf40")
        #expect(signer.verify(signature: "90UxdwGRAI2bpLSHKkZculJau5ahfxfS0h3fMuQAf40", path: Self.path) == .valid)
    }

    @Test func refusesATamperedPathOrSignature() {
        let signer = URLSigner(key: Self.key, salt: Self.salt)
        let signature = signer.signature(for: Self.path)!
        #expect(signer.verify(signature: Substring(signature), path: Self.path.replacingOccurrences(of: "300", with: "3000")[...]) == .invalid)
        var flipped = Array(signature)
        flipped[0] = flipped[0] == "A" ? "B" : "A"
        #expect(signer.verify(signature: Substring(String(flipped)), path: Self.path) == .invalid)
        #expect(signer.verify(signature: "not-base64!", path: Self.path) == .invalid)
        #expect(signer.verify(signature: "c2hvcnQ", path: Self.path) == .invalid)
        // Signed without the salt: another signature.
        #expect(URLSigner(key: Self.key).verify(signature: Substring(signature), path: Self.path) == .invalid)
    }

    /// The same 32 bytes spelled with padding or with the last character's two unused bits set
    /// (`0` is 110100; `1`, `2`, `3` differ only there): refused, one cache key per signature.
    @Test func oneSpellingPerSignature() {
        let signer = URLSigner(key: Self.key, salt: Self.salt)
        let canonical = "90UxdwGRAI2bpLSHKkZculJau5ahfxfS0h3fMuQAf40"
        #expect(Base64URL.decode(Substring(canonical + "=")) == Base64URL.decode(Substring(canonical)))
        for other in [canonical + "=", String(canonical.dropLast()) + "1", String(canonical.dropLast()) + "2", String(canonical.dropLast()) + "3"] {
            #expect(Base64URL.decode(Substring(other)) == Base64URL.decode(Substring(canonical)))
            #expect(signer.verify(signature: Substring(other), path: Self.path) == .invalid, "\(other)")
        }
        #expect(signer.verify(signature: Substring(canonical), path: Self.path) == .valid)
    }

    @Test func unsafeOnlyWithoutAKeyAndWhenAllowed() {
        #expect(URLSigner(key: Self.key, allowsUnsigned: true).verify(signature: "unsafe", path: Self.path) == .invalid)
        #expect(URLSigner(key: nil, allowsUnsigned: true).verify(signature: "unsafe", path: Self.path) == .valid)
        guard case .notAccepted = URLSigner(key: nil).verify(signature: "unsafe", path: Self.path) else {
            Issue.record("unsafe accepted without --allow-unsigned")
            return
        }
    }
}
