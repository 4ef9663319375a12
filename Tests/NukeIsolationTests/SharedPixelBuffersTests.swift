import CNukeIsolation
import Foundation
import NukeCore
@testable import NukeIsolation
import Testing

extension IsolationSuites {
    /// The host's lent pixel memory: whatever a buffer held is zero before it is lent again, on each
    /// way a buffer falls idle (its helper reaped with the buffer unused, or its image released before
    /// or after its helper was reaped).
    struct SharedPixelBuffersTests {
        static let size = 16 << 10

        /// Writes `byte` over the buffer through a mapping of its descriptor, as a helper does.
        static func scribble(_ fd: Int32, capacity: Int, _ byte: Int32) throws {
            let mapping = try #require(nukeiso_map(fd, capacity, 0))
            memset(mapping, byte, capacity)
            nukeiso_unmap(mapping, capacity)
        }

        /// Whether every byte of the buffer is zero, read through a mapping of its descriptor.
        static func isZero(_ fd: Int32, capacity: Int) throws -> Bool {
            let mapping = try #require(nukeiso_map(fd, capacity, 0))
            defer { nukeiso_unmap(mapping, capacity) }
            return UnsafeRawBufferPointer(start: mapping, count: capacity).allSatisfy { $0 == 0 }
        }

        @Test func aBufferIsZeroBeforeItIsLentAgain() throws {
            let buffers = SharedPixelBuffers(budget: 64 << 20)

            // Lent, written, never handed over; the helper is reaped.
            let first = buffers.makeLease()
            let lent = try buffers.lend(byteCount: Self.size, to: first, limit: .max)
            try Self.scribble(lent.fd, capacity: lent.capacity, 0xAB)
            buffers.ended(first)

            // Lent again: the same buffer, zero. Handed over as an image, which outlives its helper.
            let second = buffers.makeLease()
            let again = try buffers.lend(byteCount: Self.size, to: second, limit: .max)
            #expect(again.id == lent.id)
            #expect(try Self.isZero(again.fd, capacity: again.capacity))
            try Self.scribble(again.fd, capacity: again.capacity, 0xCD)
            var image: PixelStorage? = try buffers.adopt(id: again.id, byteCount: Self.size, lease: second)
            buffers.ended(second)
            image = nil

            // Released after its helper was reaped: zero when lent again. Released before: the same.
            let third = buffers.makeLease()
            let lentThird = try buffers.lend(byteCount: Self.size, to: third, limit: .max)
            #expect(lentThird.id == lent.id)
            #expect(try Self.isZero(lentThird.fd, capacity: lentThird.capacity))
            try Self.scribble(lentThird.fd, capacity: lentThird.capacity, 0xEF)
            image = try buffers.adopt(id: lentThird.id, byteCount: Self.size, lease: third)
            image = nil
            buffers.ended(third)

            let fourth = buffers.makeLease()
            let last = try buffers.lend(byteCount: Self.size, to: fourth, limit: .max)
            #expect(last.id == lent.id)
            #expect(try Self.isZero(last.fd, capacity: last.capacity))
            withExtendedLifetime(image) {}
            buffers.ended(fourth)
        }
    }
}
