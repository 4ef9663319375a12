import BombCorpus
import CAllocationCounter
import Foundation
import NukeBMP
import NukeCore
import NukeGIF
import NukeHEIF
import NukeICO
import NukeJPEG
import NukeJXL
import NukePNG
import NukeSVG
import NukeTIFF
import NukeWebP
import NukeXBM

// Every bomb in Tests/BombCorpus decoded under ImageLimits.untrusted, in process, with every
// malloc in the process counted (CAllocationCounter): the most allocated at once between the
// start of the decode and its error, by NukeCodecs and the C libraries together. Goal: < 1 MB.
// Usage: NukeBombAllocations

// Warm up first, so that what each library sets up once per process (tables, registries,
// fontconfig's cache) is not counted against the first bomb of its format.
let tiny = Image(bitmap: Bitmap(width: 16, height: 16, pixelFormat: .rgba8, bytes: [UInt8](repeating: 128, count: 16 * 16 * 4)))
for type in [ImageType.jpeg, .png, .gif, .webp, .heic] {
    guard let encoded = try? ImageEncoderRegistry.shared.encode(tiny, as: type) else { continue }
    _ = try? ImageDecoderRegistry.shared.decode(encoded)
}
_ = try? ImageDecoderRegistry.shared.decode(Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><text>a</text></svg>"#.utf8))

// The counter at work: an ordinary decode of each C library's own allocations must show up.
let photo = Bitmap(width: 640, height: 480, pixelFormat: .rgb8, bytes: (0..<(640 * 480 * 3)).map { UInt8(truncatingIfNeeded: $0 * 7 / 3) })
guard let photoJPEG = try? ImageEncoderRegistry.shared.encode(Image(bitmap: photo), as: .jpeg) else { fatalError("cannot encode the control JPEG") }
_ = nuke_allocated_reset_peak()
let controlBase = nuke_allocated_now()
_ = try? ImageDecoderRegistry.shared.decode(photoJPEG)
let controlPeak = nuke_allocated_peak() - controlBase
print(String(format: "control: a 640×480 JPEG decode allocates %.1f KB at most (its pixels alone are %.1f KB)", Double(controlPeak) / 1000, Double(640 * 480 * 3) / 1000))
guard controlPeak >= 640 * 480 * 3 else {
    print("the allocation counter does not see the decoder's allocations: malloc is not interposed")
    exit(2)
}

let limit: Int64 = 1 << 20
var failures = 0
print("bomb                            input    allocated at most   error")
for bomb in Bombs.all {
    var context = ImageDecoderRegistry.shared.makeContext(for: bomb.data)
    context.limits = .untrusted
    let start = nuke_allocated_reset_peak()
    var outcome: String
    var rejected = false
    do {
        _ = try ImageDecoderRegistry.shared.decode(context)
        outcome = "decoded: not rejected"
    } catch let error as ImageCodecError {
        rejected = error.code == bomb.code
        outcome = rejected ? "\(error.code)" : "\(error.code), expected \(bomb.code)"
    } catch {
        outcome = "\(error)"
    }
    let allocated = nuke_allocated_peak() - start
    let met = rejected && allocated < limit
    if !met { failures += 1 }
    let name = bomb.name.padding(toLength: 30, withPad: " ", startingAt: 0)
    let input = String(format: "%6.1f KB", Double(bomb.data.count) / 1000)
    let peak = String(format: "%9.1f KB", Double(allocated) / 1000)
    print("\(met ? "ok  " : "MISS") \(name) \(input)  \(peak)        \(outcome)")
}
print(failures == 0 ? "every bomb rejected with less than 1 MB allocated" : "\(failures) bombs missed: goal < 1 MB allocated and the expected error")
exit(failures == 0 ? 0 : 1)
