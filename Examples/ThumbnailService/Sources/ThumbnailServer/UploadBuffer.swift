import Foundation
import NIOCore

/// An upload's bytes as they arrive: in memory while the byte budget has room for them, then in
/// the spool (what was in memory moves there and its share of the budget returns). Neither has
/// room: `refuse()`, a 503. Used by the one task that reads the upload.
final class UploadBuffer {
    private let share: ByteBudget.Share
    private let spool: Spool?
    private let refuse: @Sendable () -> Thumbnailer.Failure
    private var memory = Data()
    private var file: Spool.File?

    /// Reserves `declared` bytes at once, in memory or in the spool, before any is read.
    init(share: ByteBudget.Share, spool: Spool?, declared: Int?, refuse: @escaping @Sendable () -> Thumbnailer.Failure) throws(Thumbnailer.Failure) {
        self.share = share
        self.spool = spool
        self.refuse = refuse
        guard let declared else { return }
        if share.grow(to: declared) {
            memory.reserveCapacity(declared)
        } else {
            try spill(reserving: declared)
        }
    }

    var count: Int { file?.size ?? memory.count }

    func append(_ chunk: ByteBuffer) throws(Thumbnailer.Failure) {
        if file == nil {
            if share.grow(to: memory.count + chunk.readableBytes) {
                memory.append(contentsOf: chunk.readableBytesView)
                return
            }
            try spill(reserving: memory.count + chunk.readableBytes)
        }
        try write { file in try chunk.withUnsafeReadableBytes { try file.append($0) } }
    }

    /// The first `length` bytes, for sniffing.
    func head(_ length: Int) -> Data {
        file?.read(length) ?? memory.prefix(length)
    }

    /// Everything read: the memory, or the spool's file mapped.
    func data() throws(Thumbnailer.Failure) -> Data {
        guard let file else { return memory }
        do {
            return try file.mapped()
        } catch {
            throw refuse()
        }
    }

    /// Lets go of what was read (its memory or spool share returns): the upload goes elsewhere.
    func discard() {
        memory = Data()
        file = nil
        share.release()
    }

    /// Moves to a spool file holding `bytes`, with what is in memory so far.
    private func spill(reserving bytes: Int) throws(Thumbnailer.Failure) {
        guard let spool, let created = try? spool.create(share: ByteBudget.Share(spool.budget)), created.share.grow(to: bytes) else { throw refuse() }
        file = created
        try write { file in try memory.withUnsafeBytes { try file.append($0) } }
        memory = Data()
        share.release()
    }

    /// A full disk or spool is the server's state, not the client's fault: 503.
    private func write(_ body: (Spool.File) throws -> Void) throws(Thumbnailer.Failure) {
        guard let file else { return }
        do {
            try body(file)
        } catch {
            throw refuse()
        }
    }
}
