import NukeCore

extension ImageProcessors {
    /// A processor made of a closure, identified by the `id` given: two with the same `id` must
    /// do the same thing.
    public struct Anonymous: ImageProcessing, CustomStringConvertible {
        /// The identifier.
        public let identifier: String
        private let closure: @Sendable (Bitmap) throws -> Bitmap

        /// Creates a processor that runs `closure` on each bitmap (each frame of an animation).
        public init(id: String, _ closure: @escaping @Sendable (Bitmap) throws -> Bitmap) {
            self.identifier = id
            self.closure = closure
        }

        public func process(_ bitmap: Bitmap) throws -> Bitmap {
            try closure(bitmap)
        }

        public var description: String { "AnonymousProcessor(identifier: \(identifier))" }
    }
}
