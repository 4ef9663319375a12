// swift-tools-version: 6.3
// A third-party codec plugin, as a user would write one: QOI ("Quite OK Image", qoiformat.org)
// in Swift, in its own package, depending on NukeCodecs by path. It is the template
// Docs/WritingACodecPlugin.md walks through.
import PackageDescription

// The checkout two folders up; SwiftPM names a path dependency after its folder (an app that
// depends on a released NukeCodecs writes `package: "NukeCodecs"`).
let nukeCodecs = Context.packageDirectory.split(separator: "/").dropLast(2).last.map(String.init) ?? "NukeCodecs"
let swiftSettings: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "QOIPlugin",
    products: [.library(name: "NukeQOI", targets: ["NukeQOI"])],
    dependencies: [.package(path: "../..")],
    targets: [
        .target(
            name: "NukeQOI",
            dependencies: [
                .product(name: "NukeCore", package: nukeCodecs),
                .product(name: "NukePixels", package: nukeCodecs),
                .product(name: "NukePluginKit", package: nukeCodecs),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NukeQOITests",
            dependencies: [
                "NukeQOI",
                .product(name: "NukeCore", package: nukeCodecs),
                .product(name: "NukeConformance", package: nukeCodecs),
                // The references are PNG files Pillow wrote; NukePNG reads them.
                .product(name: "NukePNG", package: nukeCodecs),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
