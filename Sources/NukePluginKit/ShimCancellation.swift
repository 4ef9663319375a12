public import CNukeShim
public import NukeCore

extension ImageDecodingCancellation {
    /// Calls `body` with a `nuke_cancellation` that asks this token (and the calling task), for
    /// a shim call that checks it between rows, chunks or tiles and returns
    /// `NUKE_STATUS_CANCELLED`. The pointer is valid only during `body`.
    public func withShimCancellation<R, E: Error>(_ body: (UnsafePointer<nuke_cancellation>) throws(E) -> R) throws(E) -> R {
        var cancellation = nuke_cancellation(
            is_cancelled: { context in
                guard let context else { return 0 }
                return Unmanaged<ImageDecodingCancellation>.fromOpaque(context).takeUnretainedValue().isCancelled ? 1 : 0
            },
            context: Unmanaged.passUnretained(self).toOpaque()
        )
        return try withExtendedLifetime(self) { () throws(E) -> R in try body(&cancellation) }
    }
}

extension ImageDecodingContext {
    /// ``NukeCore/ImageDecodingCancellation/withShimCancellation(_:)`` for this request's
    /// cancellation (its token and its task).
    public func withShimCancellation<R, E: Error>(_ body: (UnsafePointer<nuke_cancellation>) throws(E) -> R) throws(E) -> R {
        try cancellationToken.withShimCancellation(body)
    }
}
