import CNukeIsolation
import CNukeIsolationTestSupport
import Foundation

/// A compromised helper: it speaks the wire protocol with bytes of its own making, not with
/// NukeIsolation's encoder, and answers a decode with one hostile message (`scenario`). The tests
/// start it as a pool's helper program and check that the host refuses what it sends, kills it,
/// and neither traps nor allocates what it announces.
enum FakeHelper {
    static let socket: Int32 = 3

    static func run(scenario: String) -> Never {
        _ = receive()  // the warm-up samples
        var status = Writer()
        for flag in [true, true] { status.bool(flag) }
        status.int(7)
        for flag in [true, true, true, false] { status.bool(flag) }
        status.int(65534)
        status.int(65534)
        status.bytes(nil)
        var ready = Writer()
        ready.bool(true)
        ready.string("fake")
        ready.bytes(status.data)
        send(10, ready.data)
        // Take the request and the input, then answer the first `.next`.
        while let (kind, _) = receive(), kind != 4 {}
        switch scenario {
        case "honest":
            sendImage(width: 3, height: 2, buffer: borrow(24))
        case "huge-width":
            sendImage(width: 1 << 62, height: 1, buffer: borrow(24))
        case "overflowing-size":
            sendImage(width: 1 << 40, height: 1 << 40, buffer: borrow(24))
        case "buffer-not-lent":
            _ = borrow(24)
            sendImage(width: 3, height: 2, buffer: 999_999)
        case "image-larger-than-buffer":
            sendImage(width: 3, height: 2, buffer: borrow(8))
        case "terabyte-allocation":
            _ = borrow(1 << 40)
        case "many-frames":
            sendImage(width: 3, height: 2, buffer: borrow(24), frames: 1_000_000)
        case "gigabyte-message":
            // A final image of 1 GiB announced; only the header follows.
            var header = Data([14])
            withUnsafeBytes(of: UInt32(1 << 30).littleEndian) { header.append(contentsOf: $0) }
            write(header)
        case "unknown-kind":
            send(99, Data(count: 16))
        case "negative-header":
            var header = Writer()
            header.string("public.jpeg")
            header.int(-5)
            header.int(1 << 62)
            for _ in 0..<3 { header.int(-1) }
            header.bool(false)
            header.int(-1)
            header.bool(false)
            header.int(-1)
            send(12, header.data)
        // Issue 40: values that trapped encoders downstream of the host, and a budget taken twice.
        case "nan-duration":
            sendImage(width: 3, height: 2, buffer: borrow(24), duration: .nan)
        case "huge-duration":
            sendImage(width: 3, height: 2, buffer: borrow(24), duration: 1e300)
        case "huge-frame-duration":
            sendImage(width: 3, height: 2, buffer: borrow(24), frames: 1, frameDuration: 1e300)
        case "huge-intent":
            sendImage(width: 3, height: 2, buffer: borrow(24), intent: 1 << 32)
        case "huge-loop-count":
            sendImage(width: 3, height: 2, buffer: borrow(24), loopCount: 1 << 40)
        case "two-large-allocations":
            // 700 MiB twice: each within the decode's 1 GiB limit, together past 1.2 ×.
            _ = borrow(700 << 20)
            _ = borrow(700 << 20)
        case "allocation-beyond-declared":
            // 64 MiB for an input whose header declares 160 × 120: within 1.2 × the byte limit,
            // far past four images of the declared size.
            _ = borrow(64 << 20)
        case "descriptors-with-every-message":
            // 250 descriptors the host never asked for with each message of an honest answer:
            // the host reads its socket with read(2), which takes none (the kernel closes them).
            sendImage(width: 3, height: 2, buffer: borrow(24))
        case "secret-failure":
            var failure = Writer()
            failure.string("corrupt")
            failure.string("decoding")
            failure.string("public.png")
            failure.string("libpng AKIA-not-for-clients")
            failure.string("bad CRC; AWS_SECRET_ACCESS_KEY=AKIA-not-for-clients\nforged log line")
            send(15, failure.data)
        case "truncated-message":
            var header = Data([14])
            withUnsafeBytes(of: UInt32(200).littleEndian) { header.append(contentsOf: $0) }
            write(header + Data(count: 20))
            exit(0)
        default:
            exit(3)
        }
        while receive() != nil {}
        exit(0)
    }

    /// Asks the host for `bytes` of pixel memory and returns the buffer's id (0 when refused).
    static func borrow(_ bytes: Int) -> Int {
        var request = Writer()
        request.int(bytes)
        send(16, request.data)
        guard let (kind, payload) = receive(), kind == 9, payload.count >= 16 else { return 0 }
        let id = payload.prefix(8).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        let fd = nukeiso_recv_fd(socket, -1)
        if fd >= 0 { nukeiso_close(fd) }
        return id
    }

    /// A final image message for a `width` × `height` RGBA image in buffer `buffer`.
    static func sendImage(width: Int, height: Int, buffer: Int, frames: Int = 0, duration: Double = -1, intent: Int = -1,
                          loopCount: Int = 0, frameDuration: Double = 0.1) {
        let (row, rowOverflow) = width.multipliedReportingOverflow(by: 4)
        let (total, totalOverflow) = row.multipliedReportingOverflow(by: height)
        let byteCount = rowOverflow || totalOverflow ? 24 : total
        var image = Writer()
        image.int(width)
        image.int(height)
        image.int(4)
        image.int(8)
        image.string("straight")
        image.int(rowOverflow ? 12 : row)
        image.int(byteCount)
        image.string("public.png")
        image.bool(false)
        image.int(1)
        image.bytes(nil)
        image.double(-1)
        image.int(intent)
        image.int(loopCount)
        image.double(duration)
        image.bytes(nil)
        image.bytes(nil)
        image.int(0)
        if frames > 0 {
            var animation = Writer()
            animation.int(width)
            animation.int(height)
            animation.int(0)
            animation.bytes(nil)
            animation.int(frames)
            // Only one frame's description follows, whatever the count says.
            for value in [0, 0, width, height] { animation.int(value) }
            animation.double(frameDuration)
            animation.int(0)
            animation.bool(false)
            image.bytes(animation.data)
        } else {
            image.bytes(nil)
        }
        var message = Writer()
        message.bytes(image.data)
        message.int(buffer)
        send(14, message.data)
    }

    // MARK: - Bytes

    struct Writer {
        var data = Data()
        mutating func int(_ value: Int) { withUnsafeBytes(of: Int64(value).littleEndian) { data.append(contentsOf: $0) } }
        mutating func double(_ value: Double) { withUnsafeBytes(of: value.bitPattern.littleEndian) { data.append(contentsOf: $0) } }
        mutating func bool(_ value: Bool) { data.append(value ? 1 : 0) }
        mutating func bytes(_ value: Data?) {
            guard let value else { return int(-1) }
            int(value.count)
            data.append(value)
        }
        mutating func string(_ value: String?) { bytes(value.map { Data($0.utf8) }) }
    }

    static func send(_ kind: UInt8, _ payload: Data) {
        var message = Data([kind])
        withUnsafeBytes(of: UInt32(payload.count).littleEndian) { message.append(contentsOf: $0) }
        write(message + payload)
    }

    /// Whether 250 copies of this helper's socket go with each message (`descriptors-with-every-message`).
    static let attachesDescriptors = CommandLine.arguments.contains("descriptors-with-every-message")

    static func write(_ data: Data) {
        if attachesDescriptors {
            _ = data.withUnsafeBytes { nuketest_write_with_descriptors(socket, $0.baseAddress!, $0.count, socket, 250) }
            return
        }
        _ = data.withUnsafeBytes { nukeiso_write_all(socket, $0.baseAddress!, $0.count) }
    }

    static func receive() -> (UInt8, Data)? {
        var header = [UInt8](repeating: 0, count: 5)
        guard header.withUnsafeMutableBytes({ nukeiso_read_all(socket, $0.baseAddress!, 5, -1) }) == 0 else { return nil }
        let length = Int(UInt32(header[1]) | UInt32(header[2]) << 8 | UInt32(header[3]) << 16 | UInt32(header[4]) << 24)
        var payload = Data(count: length)
        if length > 0, payload.withUnsafeMutableBytes({ nukeiso_read_all(socket, $0.baseAddress!, length, -1) }) != 0 { return nil }
        return (header[0], payload)
    }
}
