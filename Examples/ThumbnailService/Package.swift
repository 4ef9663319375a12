// swift-tools-version: 6.1
// A thumbnail service on Hummingbird 2 built on NukeCodecs, as a user would build one. Its own
// package, so that the library's users never resolve a web framework.
import PackageDescription

// The checkout two folders up; SwiftPM names a path dependency after its folder.
let nukeCodecs = Context.packageDirectory.split(separator: "/").dropLast(2).last.map(String.init) ?? "NukeCodecs"

let package = Package(
    name: "ThumbnailService",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .executableTarget(
            name: "ThumbnailService",
            dependencies: [
                .product(name: "NukeCore", package: nukeCodecs),
                .product(name: "NukePixels", package: nukeCodecs),
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
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Sources/ThumbnailService",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
