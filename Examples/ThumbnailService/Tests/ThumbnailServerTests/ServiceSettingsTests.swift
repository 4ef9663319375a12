import Testing
@testable import ThumbnailServer

@Suite struct ServiceSettingsTests {
    @Test func flagsOverTheEnvironment() throws {
        let settings = try ServiceSettings.load(
            arguments: ["ThumbnailService", "--port", "9000", "--max-decodes=6", "--origins", "images.example.com,*.cdn.example.org"],
            environment: ["THUMBNAIL_PORT": "8000", "THUMBNAIL_MAX_SLOW_DECODES": "2", "THUMBNAIL_DEFAULT_FORMAT": "jpeg",
                          "THUMBNAIL_SIGNING_KEY": String(repeating: "ab", count: 32), "THUMBNAIL_ALLOWED_PRIVATE_NETWORKS": "10.1.0.0/16"])
        #expect(settings.port == 9000)
        #expect(settings.maxDecodes == 6)
        #expect(settings.maxSlowDecodes == 2)
        #expect(settings.helperPoolSize == 3)
        #expect(settings.defaultFormat == .jpeg)
        #expect(settings.signingKey?.count == 32)
        #expect(settings.origins == ["images.example.com", "*.cdn.example.org"])
        #expect(settings.allowedPrivateNetworks == [IPNetwork("10.1.0.0/16")!])
    }

    /// The heap setting: 64 MiB by default, 0 for glibc's own, refused beyond 1 GiB; glibc takes it.
    @Test func heapKeepMegabytes() throws {
        #expect(try ServiceSettings.load(arguments: ["ThumbnailService"], environment: [:]).heapKeepMegabytes == 64)
        #expect(try ServiceSettings.load(arguments: ["ThumbnailService", "--heap-keep-megabytes", "0"], environment: [:]).heapKeepMegabytes == 0)
        #expect(try ServiceSettings.load(arguments: ["ThumbnailService"], environment: ["THUMBNAIL_HEAP_KEEP_MEGABYTES": "16"]).heapKeepMegabytes == 16)
        #expect(throws: ServiceSettings.Invalid.self) {
            _ = try ServiceSettings.load(arguments: ["ThumbnailService", "--heap-keep-megabytes", "4096"], environment: [:])
        }
        #expect(HeapTuning.keepFreedBlocks(upToMegabytes: 64))
    }

    @Test func everyProblemAtOnce() {
        #expect {
            _ = try ServiceSettings.load(
                arguments: ["ThumbnailService", "--port", "http", "--max-decods", "3", "--allow-unsigned"],
                environment: ["THUMBNAIL_SIGNING_KEY": "beef", "THUMBNAIL_DEFAULT_FORMAT": "gif", "THUMBNAIL_SOURCE_DIRECTORY": "/nonexistent",
                              "THUMBNAIL_ALLOWED_PRIVATE_NETWORKS": "10.0.0.0/33", "THUMBNAIL_ORIGINS": "exa mple.com"])
        } throws: { error in
            guard let invalid = error as? ServiceSettings.Invalid else { return false }
            let text = invalid.problems.joined(separator: "\n")
            return invalid.problems.count == 8 && text.contains("unknown flag --max-decods") && text.contains("--port / THUMBNAIL_PORT")
                && text.contains("THUMBNAIL_SIGNING_KEY: 2 bytes") && text.contains("--allow-unsigned") && text.contains("\"gif\"")
                && text.contains("/nonexistent") && text.contains("10.0.0.0/33") && text.contains("exa mple.com")
        }
    }
}
