// swift-tools-version: 6.1
// An app that links NukeHEIF and NukeJPEG with NukeIsolation and decodes untrusted uploads the
// way SECURITY.md recommends: HEIC/HEIF/AVIF (and SVG) in sandboxed helpers, which are this
// very executable started in helper mode. scripts/integration.sh places this package beside a
// `NukeCodecs` link to the checkout.
import PackageDescription

let package = Package(
    name: "IsolatedApp",
    dependencies: [.package(path: "../NukeCodecs")],
    targets: [
        .executableTarget(
            name: "IsolatedApp",
            dependencies: [
                .product(name: "NukeCore", package: "NukeCodecs"),
                .product(name: "NukeJPEG", package: "NukeCodecs"),
                .product(name: "NukeHEIF", package: "NukeCodecs"),
                .product(name: "NukeIsolation", package: "NukeCodecs"),
            ],
            path: "Sources/IsolatedApp",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
