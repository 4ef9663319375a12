// swift-tools-version: 6.1
// A thumbnail service on Hummingbird 2 built on NukeCodecs, as a user would build one. Its own
// package, so that the library's users never resolve a web framework.
//
// - ThumbnailServer: the service as a library (configuration, routes, signed URLs, sources,
//   metrics), so that its tests drive it in process;
// - ThumbnailService: the executable (also the sandboxed decode helper);
// - ThumbnailServerTests: Swift Testing.
import PackageDescription

// The checkout two folders up; SwiftPM names a path dependency after its folder.
let nukeCodecs = Context.packageDirectory.split(separator: "/").dropLast(2).last.map(String.init) ?? "NukeCodecs"
let swiftSettings: [SwiftSetting] = [.swiftLanguageMode(.v6)]
/// The server's HTTP and lifecycle stack, which the tests drive too.
let httpStack: [Target.Dependency] = [
    .product(name: "Hummingbird", package: "hummingbird"),
    .product(name: "AsyncHTTPClient", package: "async-http-client"),
    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
    .product(name: "NIOCore", package: "swift-nio"),
]

let package = Package(
    name: "ThumbnailService",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../.."),
        // Origin fetches: coalesced downloads, the source disk cache, the SSRF-checking loader.
        .package(path: "../../NukePipeline"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: [.defaults, "CommandLineArguments"]),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // MARK: - The service
        .target(
            name: "ThumbnailServer",
            dependencies: [
                .product(name: "NukeCore", package: nukeCodecs),
                .product(name: "NukePixels", package: nukeCodecs),
                .product(name: "NukeProcessing", package: nukeCodecs),
                .product(name: "NukeJPEG", package: nukeCodecs),
                .product(name: "NukePNG", package: nukeCodecs),
                .product(name: "NukeGIF", package: nukeCodecs),
                .product(name: "NukeWebP", package: nukeCodecs),
                .product(name: "NukeHEIF", package: nukeCodecs),
                .product(name: "NukeSVG", package: nukeCodecs),
                .product(name: "NukeTIFF", package: nukeCodecs),
                .product(name: "NukeJXL", package: nukeCodecs),
                .product(name: "NukeBMP", package: nukeCodecs),
                .product(name: "NukeICO", package: nukeCodecs),
                .product(name: "NukeColor", package: nukeCodecs),
                .product(name: "NukeIsolation", package: nukeCodecs),
                .product(name: "NukePipeline", package: "NukePipeline"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ] + httpStack,
            path: "Sources/ThumbnailServer",
            swiftSettings: swiftSettings
        ),
        // MARK: - The executable and decode helper
        .executableTarget(
            name: "ThumbnailService",
            dependencies: ["ThumbnailServer", .product(name: "NukeIsolation", package: nukeCodecs)],
            path: "Sources/ThumbnailService",
            swiftSettings: swiftSettings
        ),
        // MARK: - Tests
        .testTarget(
            name: "ThumbnailServerTests",
            dependencies: ["ThumbnailServer", .product(name: "NukeCore", package: nukeCodecs), .product(name: "NukeProcessing", package: nukeCodecs),
                           .product(name: "NukePipeline", package: "NukePipeline"),
                           .product(name: "NIOHTTP1", package: "swift-nio")] + httpStack,
            path: "Tests/ThumbnailServerTests",
            swiftSettings: swiftSettings
        ),
    ]
)
