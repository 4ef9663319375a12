import Foundation
import NukeConformance
import NukeCore
import NukeNetpbm
import Testing

/// `nuke` decodes HEIC, HEIF and AVIF in sandboxed helpers (itself in helper mode) by default,
/// every format with `--isolate`, none with `--in-process`.
@Suite struct IsolationCommandTests {
    @Test func formatsSaysWhatIsIsolatedAndWhetherTheSandboxIsActive() throws {
        let table = try NukeBinary.run("formats")
        #expect(table.status == 0)
        #expect(table.stdout.contains("Isolated by default"))
        #expect(table.stdout.contains("AVIF, HEIC, HEIF, SVG"))
        #expect(table.stdout.contains("Sandbox layers active: seccomp allow-list"), "\(table.stdout)")
        let json = try NukeBinary.run("formats", "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let isolation = try #require(object["isolation"] as? [String: Any])
        #expect(isolation["sandbox"] as? Bool == true)
        #expect((isolation["isolatedByDefault"] as? [String])?.contains("HEIC") == true)
    }

    /// SVG renders at the size asked for, in a helper, the same as in process (text included:
    /// the helper reads fonts, nothing else).
    @Test func svgRendersAtMaxSizeIsolated() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let isolated = directory.appendingPathComponent("a.pam"), local = directory.appendingPathComponent("b.pam")
        #expect(try NukeBinary.run("convert", "Fixtures/svg/text.svg", isolated.path, "--max-size", "320x320").status == 0)
        #expect(try NukeBinary.run("convert", "--in-process", "Fixtures/svg/text.svg", local.path, "--max-size", "320x320").status == 0)
        let bitmap = try Netpbm.decode(Data(contentsOf: isolated))
        #expect(bitmap.width == 320 && bitmap.height == 120)
        #expect(try Data(contentsOf: isolated) == Data(contentsOf: local))
        let info = try NukeBinary.run("info", "Fixtures/svg/transforms-opacity.svg")
        #expect(info.stdout.contains("intrinsic size 50×50, viewBox 0 0 100 100"), "\(info.stdout)")
    }

    static let systemFont = ["/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"].first { FileManager.default.fileExists(atPath: $0) }

    /// An app's own fontconfig configuration (FONTCONFIG_FILE naming a font folder of its own)
    /// reaches the helper: isolated text renders with the app's font, as in process, and not with
    /// the system's default (the font folder is made readable to the sandbox's user).
    @Test(.enabled(if: systemFont != nil, "needs DejaVu Sans Mono (fonts-dejavu-core) to copy into an app font folder"))
    func isolatedSVGSeesTheAppsFonts() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fonts = directory.appendingPathComponent("fonts")
        try FileManager.default.createDirectory(at: fonts, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.systemFont!, toPath: fonts.appendingPathComponent("AppFont.ttf").path)
        let configuration = directory.appendingPathComponent("fonts.conf")
        try Data("""
            <?xml version="1.0"?>
            <!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
            <fontconfig><dir>\(fonts.path)</dir></fontconfig>
            """.utf8).write(to: configuration)
        for path in [directory.path, fonts.path] { try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path) }
        for path in [configuration.path, fonts.appendingPathComponent("AppFont.ttf").path] {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        }
        func render(_ mode: String, configured: Bool) throws -> Data {
            let out = directory.appendingPathComponent("\(mode)-\(configured).pam")
            let run = try NukeBinary.run(["convert", mode, "Fixtures/svg/text.svg", out.path],
                                         environment: configured ? ["FONTCONFIG_FILE": configuration.path] : [:])
            #expect(run.status == 0, "\(run.stderr)")
            return try Data(contentsOf: out)
        }
        let isolated = try render("--isolate", configured: true)
        #expect(isolated == (try render("--in-process", configured: true)), "isolated text differs from in-process text with the app's fonts")
        #expect(isolated != (try render("--in-process", configured: false)), "the app's font configuration changed nothing")
    }

    @Test func heifIsIsolatedByDefault() throws {
        let truncated = try NukeBinary.run("info", "Fixtures/heif/truncated.heic")
        #expect(truncated.stdout.contains("isolated"), "\(truncated.stdout)")
        let inProcess = try NukeBinary.run("info", "--in-process", "Fixtures/heif/truncated.heic")
        #expect(!inProcess.stdout.contains("isolated"), "\(inProcess.stdout)")
        let jpeg = try NukeBinary.run("info", "Fixtures/jpeg/truncated-half.jpg")
        #expect(!jpeg.stdout.contains("isolated"))
    }

    @Test func isolateDecodesEveryFormatInAHelper() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let truncated = try NukeBinary.run("info", "--isolate", "Fixtures/jpeg/truncated-half.jpg")
        #expect(truncated.stdout.contains("libjpeg-turbo 2.1.5, isolated"), "\(truncated.stdout)")
        for input in ["Fixtures/jpeg/baseline-420.jpg", "Fixtures/webp/lossy-alpha.webp", "Fixtures/heif/alpha.heic", "Fixtures/svg/text.svg"] {
            let isolated = directory.appendingPathComponent("isolated.pam"), local = directory.appendingPathComponent("local.pam")
            #expect(try NukeBinary.run("convert", "--isolate", input, isolated.path).status == 0)
            #expect(try NukeBinary.run("convert", "--in-process", input, local.path).status == 0)
            #expect(try Data(contentsOf: isolated) == Data(contentsOf: local), "\(input)")
        }
        let both = try NukeBinary.run("info", "--isolate", "--in-process", "Fixtures/jpeg/baseline-420.jpg")
        #expect(both.status == 64)
    }
}
