// swift-tools-version: 6.1
// An app that lists NukeCore and NukeJPEG in its manifest and never registers anything:
// JPEG decodes through ImageDecoderRegistry.shared, PNG gets a clear "no decoder" error, and
// a decoder the app registers at startup wins for its format.
// scripts/integration.sh places this package beside a `NukeCodecs` link to the checkout.
import PackageDescription

let package = Package(
    name: "JPEGApp",
    dependencies: [.package(path: "../NukeCodecs")],
    targets: [
        .executableTarget(
            name: "JPEGApp",
            dependencies: [
                .product(name: "NukeCore", package: "NukeCodecs"),
                .product(name: "NukeJPEG", package: "NukeCodecs"),
            ],
            path: "Sources/JPEGApp",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
