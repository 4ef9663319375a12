import Foundation
import NukeConformance
import NukeCore
import NukeNetpbm
import Testing

/// NukeHEIF decodes 8-bit HEVC with FFmpeg's libavcodec when it is installed, and with libde265
/// (libheif's own plugin) otherwise or when NUKE_HEIF_HEVC_DECODER=libde265. Both are conformant
/// decoders: every HEIC fixture must come out the same, and equal heif-convert's decode (made with
/// libde265), whichever decodes it.
@Suite struct HEVCDecoderTests {
    static let libavcodecInstalled = ["61", "60", "59", "58"].contains {
        FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/libavcodec.so.\($0)")
            || FileManager.default.fileExists(atPath: "/usr/lib/aarch64-linux-gnu/libavcodec.so.\($0)")
    }

    /// `nuke formats` names the decoder in HEIC's library version.
    @Test func formatsNamesTheDecoder() throws {
        let chosen = try NukeBinary.run(["formats"])
        let forced = try NukeBinary.run(["formats"], environment: ["NUKE_HEIF_HEVC_DECODER": "libde265"])
        let heic = { (output: NukeBinary.Output) in output.lines.first { $0.hasPrefix("HEIC") } ?? "" }
        #expect(heic(forced).contains("(HEVC: libde265"), "\(heic(forced))")
        if Self.libavcodecInstalled {
            #expect(heic(chosen).contains("(HEVC: FFmpeg libavcodec "), "\(heic(chosen))")
        }
    }

    /// libavcodec costs a process about 18 ms and 17 MB to open: a small image (under 1 MB of
    /// HEVC) is decoded with libde265 unless FFmpeg is asked for, and libavcodec stays closed.
    /// Why the tests that need FFmpeg are skipped when it is absent.
    static let libavcodecMissing: Comment = "libavcodec is not installed (optional; `scripts/install-deps.sh hevc` installs it)"

    @Test(.enabled(if: libavcodecInstalled, libavcodecMissing)) func smallImagesDoNotOpenLibavcodec() throws {
        func opened(_ environment: [String: String]) throws -> Bool {
            let run = try NukeBinary.run(["info", "--in-process", NukeBinary.root.appendingPathComponent("Fixtures/heif/bt709-limited.heic").path],
                                         environment: environment.merging(["LD_DEBUG": "files"]) { $1 })
            #expect(run.status == 0)
            return run.stderr.contains("file=libavcodec.so")
        }
        #expect(try !opened([:]))
        #expect(try opened(["NUKE_HEIF_HEVC_DECODER": "ffmpeg"]))
    }

    static let fixtures = ["photo.heic", "alpha.heic", "bt709-limited.heic", "chroma422.heic", "lossless.heic", "thumbnail.heic", "ten-bit.heic"]

    /// libde265 (always there, with libheif) gives heif-convert's decode.
    @Test(arguments: fixtures)
    func libde265GivesTheReference(_ name: String) throws {
        let output = try Self.convert(name, environment: ["NUKE_HEIF_HEVC_DECODER": "libde265"])
        // The 10-bit file's reference is libheif's 8-bit reduction; the CLI keeps 16 bits.
        guard name != "ten-bit.heic" else { return }
        let reference = try Netpbm.decode(Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/heif/\(name.replacingOccurrences(of: ".", with: "-")).pam")))
        let comparison = ImageComparison(try Netpbm.decode(output), reference: reference, tolerance: .exact)
        #expect(comparison.isMatch, "\(name): \(comparison)")
    }

    /// FFmpeg, when installed, decodes every fixture to the same pixels as libde265.
    @Test(.enabled(if: libavcodecInstalled, libavcodecMissing), arguments: fixtures)
    func libavcodecGivesWhatLibde265Gives(_ name: String) throws {
        let ffmpeg = try Self.convert(name, environment: ["NUKE_HEIF_HEVC_DECODER": "ffmpeg"])
        let libde265 = try Self.convert(name, environment: ["NUKE_HEIF_HEVC_DECODER": "libde265"])
        #expect(ffmpeg == libde265, "\(name): FFmpeg and libde265 differ")
    }

    /// `nuke convert --in-process FIXTURE out.pam`: the PAM file's bytes.
    static func convert(_ name: String, environment: [String: String]) throws -> Data {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = NukeBinary.root.appendingPathComponent("Fixtures/heif/\(name)").path
        let out = directory.appendingPathComponent("out.pam")
        let run = try NukeBinary.run(["convert", "--in-process", input, out.path], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        return try Data(contentsOf: out)
    }
}
