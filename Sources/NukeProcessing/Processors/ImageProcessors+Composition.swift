import NukeCore

extension ImageProcessors {
    /// Several processors run in order as one (nested compositions are flattened).
    public struct Composition: ImageProcessing, Hashable, CustomStringConvertible {
        /// The processors, in the order they run.
        public let processors: [any ImageProcessing]

        /// Composes `processors`, run in order.
        public init(_ processors: [any ImageProcessing]) {
            self.processors = processors.flatMap { ($0 as? Composition)?.processors ?? [$0] }
        }

        public func process(_ bitmap: Bitmap) throws -> Bitmap {
            try processors.reduce(bitmap) { try $1.process($0) }
        }

        public func process(_ container: ImageContainer, context: ImageProcessingContext) throws -> ImageContainer {
            try processors.reduce(container) { try $1.process($0, context: context) }
        }

        /// The first processor's: only it sees the decoded image.
        public func decodeTarget(for orientedSize: ImageSize?) -> ImageProcessingDecodeTarget? {
            processors.first?.decodeTarget(for: orientedSize)
        }

        /// The processors' identifiers, joined.
        public var identifier: String { processors.map(\.identifier).joined() }

        public var hashableIdentifier: AnyHashable { self }

        public func hash(into hasher: inout Hasher) {
            for processor in processors { hasher.combine(processor.hashableIdentifier) }
        }

        public static func == (lhs: Composition, rhs: Composition) -> Bool {
            lhs.processors.count == rhs.processors.count
                && zip(lhs.processors, rhs.processors).allSatisfy { $0.hashableIdentifier == $1.hashableIdentifier }
        }

        public var description: String { "Composition(processors: \(processors))" }
    }
}
