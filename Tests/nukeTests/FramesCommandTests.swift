import Foundation
import NukeConformance
import NukeCore
import NukeNetpbm
import Testing

@Suite struct FramesCommandTests {
    @Test func writesEveryCompositedFrame() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = try NukeBinary.run("frames", "Fixtures/gif/dispose-previous.gif", "--output-dir", directory.path)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.lines.first == "3 frames, 20×20, loop count forever")
        #expect(output.lines.count == 4)
        for index in 0..<3 {
            let written = try Netpbm.decode(Data(contentsOf: directory.appendingPathComponent("dispose-previous.\(index).pam")))
            let reference = try Netpbm.decode(Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/gif/dispose-previous.\(index).pam")))
            #expect(written == reference, "frame \(index)")
        }
        #expect(output.lines[1].contains("0.1 s (shown 0.1 s)"))
        #expect(output.lines[2].contains("disposal previous"))
    }

    @Test func infoShowsFramesLoopAndDurations() throws {
        let output = try NukeBinary.run("info", "--json", "Fixtures/gif/tiny-delays.gif", "Fixtures/gif/still.gif")
        #expect(output.status == 0, "\(output.stderr)")
        let objects = try #require(try NukeBinary.json(output) as? [[String: Any]])
        #expect(objects.count == 2)
        #expect(objects[0]["format"] as? String == "GIF")
        #expect(objects[0]["frames"] as? Int == 3)
        #expect(objects[0]["loopCount"] as? Int == 0)
        #expect(objects[0]["durations"] as? [Double] == [0, 0.01, 0.02])
        #expect(objects[1]["frames"] as? Int == 1)
        let text = try NukeBinary.run("info", "Fixtures/gif/positions-loop3.gif")
        #expect(text.stdout.contains("3 (decoded on demand), loop count 3"))
        #expect(text.stdout.contains("0.07, 0.07, 0.07 s as stored"))
    }
}

@Suite struct AnimatedConvertTests {
    @Test func convertKeepsTheAnimationWhenTheOutputCanHoldIt() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let gif = directory.appendingPathComponent("out.gif").path
        let png = directory.appendingPathComponent("out.png").path
        #expect(try NukeBinary.run("convert", "Fixtures/gif/dispose-previous.gif", gif).status == 0)
        #expect(try NukeBinary.run("convert", "Fixtures/gif/dispose-previous.gif", png).status == 0)
        let output = try NukeBinary.run("info", "--json", gif, png)
        let objects = try #require(try NukeBinary.json(output) as? [[String: Any]])
        #expect(objects[0]["frames"] as? Int == 3)
        #expect(objects[0]["durations"] as? [Double] == [0.1, 0.2, 0.3])
        // PNG holds the animation too: APNG.
        #expect(objects[1]["frames"] as? Int == 3)
        #expect(objects[1]["durations"] as? [Double] == [0.1, 0.2, 0.3])
        // The re-encoded frames are the original's composited frames.
        let frames = try NukeBinary.run("frames", gif, "--output-dir", directory.path)
        #expect(frames.status == 0)
        for index in 0..<3 {
            let written = try Netpbm.decode(Data(contentsOf: directory.appendingPathComponent("out.\(index).pam")))
            let reference = try Netpbm.decode(Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/gif/dispose-previous.\(index).pam")))
            #expect(written == reference, "frame \(index)")
        }
    }
}
