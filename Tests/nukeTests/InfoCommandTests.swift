import Foundation
import NukeConformance
import Testing

@Suite struct InfoCommandTests {
    static let keys: Set = ["file", "bytes", "format", "type", "width", "height", "pixelFormat", "bitDepth", "channels",
                            "hasAlpha", "frames", "loopCount", "durations", "orientation", "iccProfile", "iccProfileSize", "progressive",
                            "interlaced", "scans", "error"]

    @Test(arguments: NukeBinary.fixtures("jpeg").filter { $0.expectedError == nil })
    func jpegFixture(_ fixture: Fixture) throws {
        let output = try NukeBinary.run("info", "--json", fixture.url.path)
        #expect(output.status == 0, "\(output.stderr)")
        let objects = try #require(try NukeBinary.json(output) as? [[String: Any]])
        let object = try #require(objects.first)
        #expect(Set(object.keys) == Self.keys)
        #expect(object["format"] as? String == "JPEG")
        #expect(object["width"] as? Int == fixture.width)
        #expect(object["height"] as? Int == fixture.height)
        #expect(object["progressive"] as? Bool == fixture.isProgressive ?? false)
        #expect(object["scans"] as? Int == fixture.scans)
        #expect(object["interlaced"] is NSNull)
        #expect(object["error"] is NSNull)
        #expect(object["frames"] as? Int == 1)
    }

    @Test(arguments: NukeBinary.fixtures("png").filter { $0.expectedError == nil })
    func pngFixture(_ fixture: Fixture) throws {
        let output = try NukeBinary.run("info", "--json", fixture.url.path)
        #expect(output.status == 0, "\(output.stderr)")
        let object = try #require((try NukeBinary.json(output) as? [[String: Any]])?.first)
        #expect(object["format"] as? String == "PNG")
        #expect(object["width"] as? Int == fixture.width)
        #expect(object["height"] as? Int == fixture.height)
        #expect(object["interlaced"] as? Bool == fixture.isInterlaced ?? false)
        #expect(object["progressive"] is NSNull)
    }

    @Test func iccAndOrientation() throws {
        let output = try NukeBinary.run("info", "--json", "Fixtures/jpeg/icc.jpg", "Fixtures/jpeg/exif-orientation-6-le.jpg")
        #expect(output.status == 0)
        let objects = try #require(try NukeBinary.json(output) as? [[String: Any]])
        #expect(objects.count == 2)
        #expect(objects[0]["iccProfile"] as? Bool == true)
        #expect((objects[0]["iccProfileSize"] as? Int ?? 0) > 0)
        #expect(objects[1]["orientation"] as? Int == 6)
        #expect(objects[1]["iccProfile"] as? Bool == false)
    }

    @Test func text() throws {
        let output = try NukeBinary.run("info", "Examples/progressive.jpg")
        #expect(output.status == 0)
        #expect(output.stdout.contains("JPEG (public.jpeg)"))
        #expect(output.stdout.contains("640×427"))
        #expect(output.stdout.contains("progressive  yes, 10 scans"))
        #expect(output.stdout.contains("rgb8"))
    }

    /// Every command's error line names a missing file once: `error: PATH: no such file`.
    @Test(arguments: [["info"], ["convert"], ["progressive"], ["frames"]])
    func aMissingFileIsNamedOnce(_ command: [String]) throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("missing.jpg").path
        var arguments = command + [missing]
        if command == ["convert"] { arguments.append(directory.appendingPathComponent("out.png").path) }
        if command == ["progressive"] || command == ["frames"] { arguments += ["--output-dir", directory.path] }
        let output = try NukeBinary.run(arguments)
        #expect(output.status == 4, "\(output.stderr)")
        let lines = output.stderr.split(separator: "\n").filter { $0.hasPrefix("error:") }
        #expect(lines == ["error: \(missing): no such file"], "\(output.stderr)")
    }

    @Test func exitCodes() throws {
        let missing = try NukeBinary.run("info", "/nonexistent/file.jpg")
        #expect(missing.status == 4)
        #expect(missing.stderr.contains("no such file"))
        #expect(missing.stderr == "error: /nonexistent/file.jpg: no such file\n", "\(missing.stderr)")

        let unknown = try NukeBinary.run("info", "Package.swift")
        #expect(unknown.status == 3)
        #expect(unknown.stderr.contains("not in a recognised image format"))

        let corrupt = try NukeBinary.run("info", "--json", "Fixtures/jpeg/truncated-half.jpg", "Fixtures/png/rgb-8.png")
        #expect(corrupt.status == 1)
        let objects = try #require(try NukeBinary.json(corrupt) as? [[String: Any]])
        let error = try #require(objects.first?["error"] as? [String: Any])
        #expect(error["code"] as? String == "incomplete")
        #expect((error["description"] as? String)?.contains("JPEG") == true)
        #expect(objects.first?["width"] as? Int != nil, "the header still gives the size")
        #expect(objects.last?["error"] is NSNull)
    }
}
