import Foundation
import Testing

@Suite struct FormatsCommandTests {
    @Test func helpDocumentsExitCodes() throws {
        let output = try NukeBinary.run("--help")
        #expect(output.status == 0)
        for text in ["EXIT CODES", "formats", "info", "convert", "progressive", "64"] {
            #expect(output.stdout.contains(text), "missing \(text)")
        }
        for command in ["formats", "info", "convert", "progressive"] {
            let help = try NukeBinary.run(command, "--help")
            #expect(help.status == 0)
            #expect(help.stdout.contains("USAGE: nuke \(command)"))
        }
    }

    @Test func unknownSubcommandIsAUsageError() throws {
        let output = try NukeBinary.run("frobnicate")
        #expect(output.status == 64)
        #expect(output.stderr.contains("Error"))
    }

    @Test func table() throws {
        let output = try NukeBinary.run("formats")
        #expect(output.status == 0)
        #expect(output.lines.first?.hasPrefix("FORMAT") == true)
        #expect(output.stdout.contains("NukeJPEG"))
        #expect(output.stdout.contains("libjpeg-turbo 2."))
        #expect(output.stdout.contains("NukePNG"))
        #expect(output.stdout.contains("libpng 1."))
    }

    @Test func json() throws {
        let output = try NukeBinary.run("formats", "--json")
        #expect(output.status == 0)
        let object = try #require(try NukeBinary.json(output) as? [String: Any])
        #expect(object["writers"] as? [String] == ["pam", "ppm"])
        let codecs = try #require(object["codecs"] as? [[String: Any]])
        let keys: Set = ["name", "format", "type", "extensions", "capabilities", "decode", "encode", "progressive",
                         "scaledDecode", "nativeReductions", "animation", "highBitDepth", "library", "libraryVersion", "priority"]
        for codec in codecs {
            #expect(Set(codec.keys) == keys)
        }
        let jpeg = try #require(codecs.first { $0["name"] as? String == "NukeJPEG" })
        #expect(jpeg["type"] as? String == "public.jpeg")
        #expect(jpeg["decode"] as? Bool == true)
        #expect(jpeg["encode"] as? Bool == true)
        #expect(jpeg["progressive"] as? Bool == true)
        #expect(jpeg["scaledDecode"] as? Bool == true)
        #expect(jpeg["nativeReductions"] as? String == "1/8…8/8")
        #expect(jpeg["library"] as? String == "libjpeg-turbo")
        #expect((jpeg["libraryVersion"] as? String)?.isEmpty == false)
        let png = try #require(codecs.first { $0["name"] as? String == "NukePNG" })
        #expect(png["library"] as? String == "libpng")
        #expect((png["capabilities"] as? [String])?.contains("decode") == true)
    }
}

/// `nuke fetch` runs NukePipeline's nuke-fetch (a package of its own), or says how to build it.
@Suite struct FetchCommandTests {
    @Test func runsNukeFetchWithTheSameArguments() throws {
        let folder = try NukeBinary.temporaryDirectory()
        let script = folder.appendingPathComponent("nuke-fetch")
        try "#!/bin/sh\necho \"nuke-fetch got: $*\"\nexit 7\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let output = try NukeBinary.run(["fetch", "https://example.com/a.jpg", "--size", "256", "--out", "dir"],
                                        environment: ["NUKE_FETCH": script.path])
        #expect(output.status == 7)
        #expect(output.stdout == "nuke-fetch got: https://example.com/a.jpg --size 256 --out dir\n")
    }

    @Test func saysHowToBuildNukeFetchWhenMissing() throws {
        let output = try NukeBinary.run(["fetch", "https://example.com/a.jpg"], environment: ["NUKE_FETCH": "", "PATH": "/nonexistent"])
        #expect(output.status == 4)
        #expect(output.stderr.contains("swift build -c release --package-path NukePipeline --product nuke-fetch"))
    }
}
