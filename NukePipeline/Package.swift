// swift-tools-version: 6.1
// NukePipeline: Nuke's image pipeline on Linux (loading, caches, deduplication, previews).
//
// A package of its own beside NukeCodecs, as Examples/ThumbnailService is, so that an app that
// links only codecs never resolves or builds AsyncHTTPClient and its NIO stack. (A package trait
// would keep the code out of a codec-only build, but SwiftPM still resolves and fetches a
// trait-guarded dependency for every user of the package, and a trait is one switch for the
// whole package, where this keeps the pipeline's dependencies visible in its own manifest.)
//
// - Nuke: `import Nuke` as on Apple platforms: the pipeline, the core, the processors and the
//   default codecs in one product;
// - NukePipeline: ImageRequest, ImagePipeline, ImageTask, ImageCache, DataCache, DataLoading and
//   the AsyncHTTPClient loader, ImagePrefetcher;
// - nuke-fetch (NukeFetch): `nuke fetch URL... --size 256 --to webp --out DIR --cache DIR --jobs N`;
// - NukePipelineBenchmarks: the caches' figures, printed as ratios from one run;
// - NukePipelineTests: Swift Testing against real HTTP servers on loopback.
import PackageDescription

// The checkout one folder up; SwiftPM names a path dependency after its folder.
let nukeCodecs = Context.packageDirectory.split(separator: "/").dropLast(1).last.map(String.init) ?? "NukeCodecs"
let swiftSettings: [SwiftSetting] = [.swiftLanguageMode(.v6)]
// The codecs `import Nuke` and `nuke-fetch` link: every format Nuke's platform reads, and JPEG XL.
let defaultCodecs = ["NukeJPEG", "NukePNG", "NukeGIF", "NukeWebP", "NukeHEIF", "NukeTIFF", "NukeJXL", "NukeBMP", "NukeICO"]

let package = Package(
    name: "NukePipeline",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Nuke", targets: ["Nuke"]),
        .library(name: "NukePipeline", targets: ["NukePipeline"]),
        .executable(name: "nuke-fetch", targets: ["nuke-fetch"]),
    ],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "NukePipeline",
            dependencies: [
                .product(name: "NukeCore", package: nukeCodecs),
                .product(name: "NukeSession", package: nukeCodecs),
                .product(name: "NukeProcessing", package: nukeCodecs),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Sources/NukePipeline",
            swiftSettings: swiftSettings
        ),
        // `import Nuke`: the pipeline, the core, the processors and the default codecs.
        .target(
            name: "Nuke",
            dependencies: ["NukePipeline"] + defaultCodecs.map { .product(name: $0, package: nukeCodecs) }
                + ["NukeCore", "NukeProcessing"].map { .product(name: $0, package: nukeCodecs) },
            path: "Sources/Nuke",
            swiftSettings: swiftSettings
        ),
        // `nuke fetch`: the run (a library, so the tests drive it in process) and its command line,
        // which links the codecs a fetch may meet.
        .target(
            name: "NukeFetch",
            dependencies: ["NukePipeline", .product(name: "NukeCore", package: nukeCodecs)],
            path: "Sources/NukeFetch",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "nuke-fetch",
            dependencies: [
                "NukeFetch", "NukePipeline",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ] + (["NukeCore", "NukeIsolation"] + defaultCodecs).map { .product(name: $0, package: nukeCodecs) },
            path: "Sources/nuke-fetch",
            swiftSettings: swiftSettings
        ),
        // A real HTTP server on loopback (HTTP/1.1, or HTTP/2 over TLS) with faults on demand,
        // for the tests and the benchmarks.
        .target(
            name: "NukePipelineTestServer",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ],
            path: "Sources/NukePipelineTestServer",
            swiftSettings: swiftSettings
        ),
        // Figures measured in one run: `swift run -c release NukePipelineBenchmarks`.
        .executableTarget(
            name: "NukePipelineBenchmarks",
            dependencies: ["NukePipeline", "NukePipelineTestServer", .product(name: "NukeCore", package: nukeCodecs),
                           .product(name: "NukeJPEG", package: nukeCodecs), .product(name: "NukeProcessing", package: nukeCodecs),
                           .product(name: "AsyncHTTPClient", package: "async-http-client")],
            path: "Sources/NukePipelineBenchmarks",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NukePipelineTests",
            dependencies: [
                "NukePipeline", "NukeFetch", "NukePipelineTestServer",
                .product(name: "NukeCore", package: nukeCodecs),
                .product(name: "NukeProcessing", package: nukeCodecs),
                .product(name: "NukeIsolation", package: nukeCodecs),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
            // The path-equivalence matrix decodes with every codec `nuke` links, as `nuke` does.
            + (["NukeSession", "NukeConformance", "NukeColor", "NukeSVG", "NukeNetpbm", "NukeXBM"] + defaultCodecs)
                .map { .product(name: $0, package: nukeCodecs) },
            path: "Tests/NukePipelineTests",
            swiftSettings: swiftSettings
        ),
        // Snippets as Nuke's documentation writes them, with `import Nuke` alone: they compile
        // and run against an origin on loopback.
        .testTarget(
            name: "NukeDocumentationTests",
            dependencies: ["Nuke", "NukePipelineTestServer"],
            path: "Tests/NukeDocumentationTests",
            swiftSettings: swiftSettings
        ),
    ]
)
