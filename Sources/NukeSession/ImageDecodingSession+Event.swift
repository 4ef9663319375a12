#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

extension ImageDecodingSession {
    /// What a session reports, in this order: format, size, previews, then the final image or
    /// a failure.
    public enum Event: Sendable {
        /// The format was sniffed from the first bytes. Omitted only when the data matches no
        /// known signature and the decoder reports no type.
        case formatKnown(ImageType)
        /// The header was read. It comes before the decoder exists for formats `ImageHeader`
        /// parses; for others it is derived from the first image decoded.
        case sizeKnown(ImageHeader)
        /// A progressive preview (`ImageContainer.isPreview` is `true`).
        case preview(ImageContainer, Progress)
        /// The final image. Ends the events.
        case final(ImageContainer, Progress)
        /// The session failed or was cancelled (code `.cancelled`). Ends the events.
        case failure(ImageCodecError)
    }

    /// Where the session was when it produced an image.
    public struct Progress: Sendable, Hashable, CustomStringConvertible {
        /// Bytes received when the decode started.
        public var bytesReceived: Int
        /// 1 for the first preview, 2 for the second…; for the final image, the number of
        /// previews before it plus one.
        public var index: Int
        /// The number of progressive scans (JPEG) or passes (PNG) the image shows, when the
        /// decoder reported it (`ImageContainer.UserInfoKey.scanNumberKey`).
        public var scanNumber: Int?
        /// How many complete rows a preview holds (`ImageContainer.UserInfoKey.rowCountKey`).
        public var rowCount: Int?
        /// The time since the session was created.
        public var elapsed: Duration
        /// How long the decode that produced this image took.
        public var decodeDuration: Duration

        /// Creates a progress report.
        public init(bytesReceived: Int, index: Int, scanNumber: Int? = nil, rowCount: Int? = nil,
                    elapsed: Duration = .zero, decodeDuration: Duration = .zero) {
            self.bytesReceived = bytesReceived
            self.index = index
            self.scanNumber = scanNumber
            self.rowCount = rowCount
            self.elapsed = elapsed
            self.decodeDuration = decodeDuration
        }

        public var description: String {
            var parts = ["\(bytesReceived) bytes"]
            if let scanNumber { parts.append("scan \(scanNumber)") }
            if let rowCount { parts.append("\(rowCount) rows") }
            return parts.joined(separator: ", ")
        }
    }
}

extension ImageDecodingSession.Event: CustomStringConvertible {
    public var description: String {
        switch self {
        case .formatKnown(let type): return "format \(type.name)"
        case .sizeKnown(let header): return "size \(header.size)"
        case .preview(let container, let progress):
            return "preview \(progress.index) \(container.image.width)×\(container.image.height) (\(progress))"
        case .final(let container, let progress):
            return "final \(container.image.width)×\(container.image.height) (\(progress))"
        case .failure(let error): return "failure: \(error)"
        }
    }
}
