import Foundation
import Testing

/// libheif, librsvg and libjxl are opened the first time a file needs them, not when `nuke` starts: read
/// from the dynamic loader's own log (glibc's `LD_DEBUG=files`), which names every library a
/// process opens.
@Suite(.enabled(if: FileManager.default.fileExists(atPath: "/lib64/ld-linux-x86-64.so.2") || FileManager.default.fileExists(atPath: "/lib/ld-linux-aarch64.so.1")))
struct LibraryLoadingTests {
    /// The libraries `nuke` opened, by file name, while running `arguments` in process.
    private func openedLibraries(_ arguments: String...) throws -> (status: Int32, libraries: Set<String>) {
        let output = try NukeBinary.run(arguments, environment: ["LD_DEBUG": "files"])
        // Lines such as "   1234:     file=libheif.so.1 [0];  dynamically loaded by ...".
        let names = output.stderr.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "file=") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != " " && $0 != "[" && $0 != ";" })
        }
        return (output.status, Set(names))
    }

    @Test func aJPEGDecodeOpensNeitherLibheifNorLibrsvg() throws {
        let run = try openedLibraries("info", "--in-process", "Fixtures/jpeg/baseline-420-160x120.jpg")
        #expect(run.status == 0)
        #expect(run.libraries.contains { $0.hasPrefix("libjpeg") }, "\(run.libraries.sorted())")
        #expect(!run.libraries.contains { $0.hasPrefix("libheif") }, "\(run.libraries.sorted())")
        #expect(!run.libraries.contains { $0.hasPrefix("librsvg") }, "\(run.libraries.sorted())")
        #expect(!run.libraries.contains { $0.hasPrefix("libjxl") }, "\(run.libraries.sorted())")
    }

    @Test func aJPEGXLDecodeOpensLibjxlOnly() throws {
        let run = try openedLibraries("info", "--in-process", "Fixtures/jxl/lossy.jxl")
        #expect(run.status == 0)
        #expect(run.libraries.contains("libjxl.so.0.7"), "\(run.libraries.sorted())")
        #expect(!run.libraries.contains { $0.hasPrefix("libheif") || $0.hasPrefix("librsvg") }, "\(run.libraries.sorted())")
    }

    @Test func aHEICDecodeOpensLibheifOnly() throws {
        let run = try openedLibraries("info", "--in-process", "Fixtures/heif/photo.heic")
        #expect(run.status == 0)
        #expect(run.libraries.contains("libheif.so.1"), "\(run.libraries.sorted())")
        #expect(!run.libraries.contains { $0.hasPrefix("librsvg") }, "\(run.libraries.sorted())")
    }

    @Test func anSVGRenderOpensLibrsvgOnly() throws {
        let run = try openedLibraries("info", "--in-process", "Fixtures/svg/gradients.svg")
        #expect(run.status == 0)
        #expect(run.libraries.contains("librsvg-2.so.2"), "\(run.libraries.sorted())")
        #expect(!run.libraries.contains { $0.hasPrefix("libheif") }, "\(run.libraries.sorted())")
    }

    @Test func listingTheFormatsReportsTheLoadedVersions() throws {
        let run = try openedLibraries("formats")
        #expect(run.status == 0)
        #expect(run.libraries.isSuperset(of: ["libheif.so.1", "librsvg-2.so.2"]), "\(run.libraries.sorted())")
        let output = try NukeBinary.run("formats")
        #expect(output.stdout.contains("libheif 1."))
        #expect(output.stdout.contains("librsvg 2."))
    }
}
