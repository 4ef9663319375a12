import Foundation
import NukeCore

/// Decides per request what a pipeline's configuration decides for all, and hears every task's
/// events: Nuke's `ImagePipelineDelegate`. Every method has a default, so a delegate implements
/// only what it changes.
///
/// ```swift
/// final class SignedURLs: ImagePipelineDelegate {
///     // Signed URLs expire: the disk cache keys on the path alone.
///     func cacheKey(for request: ImageRequest, pipeline: ImagePipeline) -> String? {
///         request.url.map { $0.host.map { "https://\($0)" } ?? "" + $0.path }
///     }
/// }
/// let pipeline = ImagePipeline(delegate: SignedURLs()) { $0.dataCache = try? DataCache(name: "images") }
/// ```
public protocol ImagePipelineDelegate: AnyObject, Sendable {
    /// The loader for `request`. Default: the configuration's.
    func dataLoader(for request: ImageRequest, pipeline: ImagePipeline) -> any DataLoading

    /// The key the caches keep `request`'s data and images under, in place of its URL (or
    /// ``ImageRequest/imageID``); `nil` (the default) keeps the URL. The credentials and the
    /// headers the response varies on stay part of the key, so another user's request still
    /// never finds this one's response.
    func cacheKey(for request: ImageRequest, pipeline: ImagePipeline) -> String?

    /// What is written to the disk cache for `request`: the original data (`image` `nil`) or a
    /// processed image encoded; return other bytes, or `nil` to write nothing. Default: `data`.
    func willCache(data: Data, image: ImageContainer?, for request: ImageRequest, pipeline: ImagePipeline) -> Data?

    /// A task was made (before it starts).
    func imageTaskCreated(_ task: ImageTask, pipeline: ImagePipeline)

    /// A task's event, in the order ``ImageTask/events`` gives them.
    func imageTask(_ task: ImageTask, didReceiveEvent event: ImageTask.Event, pipeline: ImagePipeline)
}

extension ImagePipelineDelegate {
    public func dataLoader(for request: ImageRequest, pipeline: ImagePipeline) -> any DataLoading { pipeline.configuration.dataLoader }

    public func cacheKey(for request: ImageRequest, pipeline: ImagePipeline) -> String? { nil }

    public func willCache(data: Data, image: ImageContainer?, for request: ImageRequest, pipeline: ImagePipeline) -> Data? { data }

    public func imageTaskCreated(_ task: ImageTask, pipeline: ImagePipeline) {}

    public func imageTask(_ task: ImageTask, didReceiveEvent event: ImageTask.Event, pipeline: ImagePipeline) {}
}
