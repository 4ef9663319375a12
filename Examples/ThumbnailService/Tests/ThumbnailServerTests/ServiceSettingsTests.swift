import Foundation
import Synchronization
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
        #expect(settings.helperPoolSize == 6)
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
        // glibc takes an arena cap (more than this machine's default, so the tests keep theirs).
        #expect(HeapTuning.limitArenas(to: 64))
        #expect(!HeapTuning.limitArenas(to: 0))
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

@Suite struct TrafficSettingsTests {
    /// A mistyped variable is refused, naming the closest known one, instead of leaving its default.
    @Test func unknownVariablesAreRefusedWithTheClosestName() {
        #expect {
            _ = try ServiceSettings.load(arguments: ["ThumbnailService", "--max-decods", "3"],
                                         environment: ["THUMBNAIL_MAX_DECODS": "4", "THUMBNAIL_PORT": "8000", "HOME": "/root"])
        } throws: { error in
            guard let invalid = error as? ServiceSettings.Invalid else { return false }
            let text = invalid.problems.joined(separator: "\n")
            return invalid.problems.count == 2 && text.contains("unknown variable THUMBNAIL_MAX_DECODS (did you mean THUMBNAIL_MAX_DECODES?)")
                && text.contains("unknown flag --max-decods (did you mean --max-decodes?)")
        }
        #expect(ServiceSettings.suggestion(for: "THUMBNAIL_SOMETHING_ELSE_ENTIRELY", among: ServiceSettings.keys.map(ServiceSettings.environmentName)) == "")
    }

    @Test func trustedProxiesAndTheByteBudget() throws {
        let settings = try ServiceSettings.load(arguments: ["ThumbnailService", "--trusted-proxies", "10.0.0.0/8, ::1"],
                                                environment: ["THUMBNAIL_MAX_BUFFERED_BYTES": "\(512 << 20)"])
        #expect(settings.trustedProxies == [IPNetwork("10.0.0.0/8")!, IPNetwork("::1")!])
        #expect(settings.maxBufferedBytes == 512 << 20)
        #expect(ServiceSettings.defaultBufferedBytes >= 64 << 20)
        #expect(throws: ServiceSettings.Invalid.self) {
            _ = try ServiceSettings.load(arguments: ["ThumbnailService", "--max-buffered-bytes", "\(4 << 20)"], environment: [:])
        }
        #expect(throws: ServiceSettings.Invalid.self) {
            _ = try ServiceSettings.load(arguments: ["ThumbnailService", "--trusted-proxies", "10.0.0.0/40"], environment: [:])
        }
    }

    /// The right-most address no trusted proxy owns; what the client wrote to the left is not believed.
    @Test func theClientBehindTrustedProxies() {
        let addressing = ClientAddressing(trustedProxies: [IPNetwork("10.0.0.0/8")!, IPNetwork("127.0.0.1")!])
        #expect(addressing.client(peer: "127.0.0.1", forwardedFor: ["203.0.113.9"]) == "203.0.113.9")
        #expect(addressing.client(peer: "127.0.0.1", forwardedFor: ["6.6.6.6, 203.0.113.9", "10.1.2.3"]) == "203.0.113.9")
        #expect(addressing.client(peer: "127.0.0.1", forwardedFor: ["not-an-address, 203.0.113.9"]) == "203.0.113.9")
        #expect(addressing.client(peer: "127.0.0.1", forwardedFor: ["203.0.113.9, garbage"]) == "127.0.0.1")
        #expect(addressing.client(peer: "127.0.0.1", forwardedFor: []) == "127.0.0.1")
        #expect(addressing.client(peer: "127.0.0.1", forwardedFor: ["10.9.9.9"]) == "10.9.9.9")
        #expect(addressing.client(peer: "::ffff:127.0.0.1", forwardedFor: ["2001:db8::7"]) == "2001:db8::7")
        // Not from a trusted proxy: the header is the client's own claim.
        #expect(addressing.client(peer: "198.51.100.4", forwardedFor: ["203.0.113.9"]) == "198.51.100.4")
    }

    /// Reserved bytes come back when a share ends; a burst's end trims the heap once, when the
    /// budgets sharing the trimmer (memory and spool) are all idle.
    @Test func byteBudgetSharesAndTrim() {
        let trims = Mutex(0)
        let trimmer = HeapTrimmer(trimAfter: 50, trim: { trims.withLock { $0 += 1 } })
        let budget = ByteBudget(limit: 100, trimmer: trimmer)
        let spool = ByteBudget(limit: 1000, trimmer: trimmer)
        let spooled = ByteBudget.Share(spool)
        #expect(spooled.grow(to: 500))
        let first = ByteBudget.Share(budget)
        #expect(first.grow(to: 60))
        #expect(first.grow(to: 40))
        let second = ByteBudget.Share(budget)
        #expect(!second.grow(to: 41))
        #expect(second.grow(to: 40))
        #expect(budget.reserved == 100)
        first.release()
        #expect(trims.withLock { $0 } == 0)
        second.release()
        #expect(budget.reserved == 0)
        // The spooled upload is still being decoded: no trim in the middle of the burst.
        #expect(trims.withLock { $0 } == 0)
        spooled.release()
        #expect(trims.withLock { $0 } == 1)
    }
}
