// swift-tools-version: 6.1
// An app that depends on NukeCore alone: it must build and link without any codec library.
// scripts/integration.sh places this package beside a `NukeCodecs` link to the checkout.
import PackageDescription

let package = Package(
    name: "CoreOnlyApp",
    dependencies: [.package(path: "../NukeCodecs")],
    targets: [
        .executableTarget(
            name: "CoreOnlyApp",
            dependencies: [.product(name: "NukeCore", package: "NukeCodecs")],
            path: "Sources/CoreOnlyApp",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
