// swift-tools-version: 6.3
import PackageDescription

// NukeCodecs: a minimal core plus one optional product per format.
//
// Swift 6.3 or later: the plugins announce themselves with SE-0492 `@section`/`@used` records,
// which came with the Swift 6.3 toolchain. An older SwiftPM stops at the tools-version line above
// with "package is using Swift tools version 6.3.0 but the installed version is ...".
//
// Every target names its folder with `path:`. A plugin folder (Sources/Plugins/<Format>)
// holds the three targets of its format: the system library, our C shim, the Swift module.
// The core links no codec library: an app that depends on NukeCore alone builds without any.

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
]

/// The three targets of a codec plugin, plus its test target.
func plugin(
    _ format: String,
    pkgConfig: String?,
    apt: [String],
    brew: [String],
    testResources: [Resource] = [],
    shimLinks: [String] = [],
    testDependencies: [Target.Dependency] = []
) -> [Target] {
    let base = "Sources/Plugins/\(format)"
    return [
        .systemLibrary(
            name: "CLib\(format)", path: "\(base)/CLib\(format)", pkgConfig: pkgConfig,
            providers: [.apt(apt), .brew(brew)]
        ),
        .target(
            name: "C\(format)Shim", dependencies: ["CNukeShim", .target(name: "CLib\(format)")], path: "\(base)/C\(format)Shim",
            // The shim includes `CLib<Format>.h`, the library's headers as the system target names them.
            cSettings: [.headerSearchPath("../CLib\(format)")],
            linkerSettings: shimLinks.map { .linkedLibrary($0) }
        ),
        .target(
            name: "Nuke\(format)", dependencies: ["NukeCore", "NukePixels", "NukePluginKit", .target(name: "C\(format)Shim"), .target(name: "CLib\(format)")],
            path: "\(base)/Nuke\(format)", swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "Nuke\(format)Tests", dependencies: [.target(name: "Nuke\(format)"), .target(name: "C\(format)Shim"), "NukeCore", "NukePixels", "NukePluginKit", "NukeSession", "NukeConformance", "NukeNetpbm", "CNukeShim"] + testDependencies,
            path: "Tests/Nuke\(format)Tests", swiftSettings: swiftSettings
        ),
    ]
}

let package = Package(
    name: "NukeCodecs",
    products: [
        .library(name: "NukeCore", targets: ["NukeCore"]),
        .library(name: "NukePixels", targets: ["NukePixels"]),
        .library(name: "NukeSession", targets: ["NukeSession"]),
        .library(name: "NukeProcessing", targets: ["NukeProcessing"]),
        .library(name: "NukePluginKit", targets: ["NukePluginKit"]),
        .library(name: "NukeJPEG", targets: ["NukeJPEG"]),
        .library(name: "NukePNG", targets: ["NukePNG"]),
        .library(name: "NukeGIF", targets: ["NukeGIF"]),
        .library(name: "NukeWebP", targets: ["NukeWebP"]),
        .library(name: "NukeHEIF", targets: ["NukeHEIF"]),
        .library(name: "NukeSVG", targets: ["NukeSVG"]),
        .library(name: "NukeTIFF", targets: ["NukeTIFF"]),
        .library(name: "NukeJXL", targets: ["NukeJXL"]),
        .library(name: "NukeNetpbm", targets: ["NukeNetpbm"]),
        .library(name: "NukeBMP", targets: ["NukeBMP"]),
        .library(name: "NukeICO", targets: ["NukeICO"]),
        .library(name: "NukeXBM", targets: ["NukeXBM"]),
        .library(name: "NukeColor", targets: ["NukeColor"]),
        .library(name: "NukeIsolation", targets: ["NukeIsolation"]),
        .library(name: "NukeConformance", targets: ["NukeConformance"]),
        .executable(name: "nuke-isolation-helper", targets: ["nuke-isolation-helper"]),
        .executable(name: "nuke", targets: ["nuke"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // `swift package generate-documentation` (scripts/docs.sh); a plugin, linked into nothing.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // MARK: - Core (links no codec library)
        .target(name: "CNukeCore", path: "Sources/CNukeCore"),
        // The C shim convention every plugin's shim follows (Docs/CShims.md).
        .target(name: "CNukeShim", path: "Sources/CNukeShim"),
        .target(name: "NukeCore", dependencies: ["CNukeCore"], path: "Sources/NukeCore", swiftSettings: swiftSettings),
        .testTarget(name: "NukeCoreTests", dependencies: ["NukeCore", "NukePixels", "NukeSession"], path: "Tests/NukeCoreTests", swiftSettings: swiftSettings),
        // Pixel work every plugin and the output stage share: the resampler, conversions, the
        // animation compositor, a buffer pool.
        .target(name: "NukePixels", dependencies: ["NukeCore"], path: "Sources/NukePixels", swiftSettings: swiftSettings),
        // What every codec plugin shares (Docs/WritingACodecPlugin.md): the Swift side of the C
        // shim convention, the Nuke-style decoder, whole-input decoding, and the decode driver that
        // gives every plugin limits, cancellation and decode to size.
        .target(name: "NukePluginKit", dependencies: ["NukeCore", "NukePixels", "CNukeShim"], path: "Sources/NukePluginKit", swiftSettings: swiftSettings),
        .testTarget(name: "NukePluginKitTests", dependencies: ["NukePluginKit", "NukeCore", "CNukeShim"], path: "Tests/NukePluginKitTests", swiftSettings: swiftSettings),
        // Progressive decoding of a download: events as bytes arrive, off the caller's thread.
        .target(name: "NukeSession", dependencies: ["NukeCore"], path: "Sources/NukeSession", swiftSettings: swiftSettings),

        // MARK: - Processing (Nuke's ImageProcessors: resize, crop, rotate, rounded corners, blur…; Swift, no C library)
        // Runs inside the decode plan: a leading resize becomes the decode's target size.
        .target(name: "NukeProcessing", dependencies: ["NukeCore", "NukePixels"], path: "Sources/NukeProcessing", swiftSettings: swiftSettings),
        .testTarget(
            name: "NukeProcessingTests", dependencies: ["NukeProcessing", "NukeCore", "NukePixels", "NukeNetpbm", "NukeJPEG", "NukePNG", "NukeGIF", "NukeWebP", "NukeColor"],
            path: "Tests/NukeProcessingTests", swiftSettings: swiftSettings
        ),
        // Ratios: a 12 MP JPEG filled against fitted to 256 × 256, a 1 MP blur against Pillow's, the
        // peak memory of a 500-frame GIF resized to an animated WebP.
        .executableTarget(name: "NukeProcessingBenchmark", dependencies: ["NukeProcessing", "NukeCore", "NukePixels", "NukeJPEG", "NukePNG", "NukeGIF", "NukeWebP", "NukeColor"], path: "Benchmarks/ProcessingBenchmark", swiftSettings: swiftSettings),

        // MARK: - Isolation (decoding in sandboxed helper processes; links no codec library)
        .target(name: "CNukeIsolation", path: "Sources/CNukeIsolation"),
        .target(name: "NukeIsolation", dependencies: ["NukeCore", "NukePixels", "CNukeIsolation"], path: "Sources/NukeIsolation", swiftSettings: swiftSettings),
        // A helper program with every codec of this package, for apps that ship one separately.
        .executableTarget(
            name: "nuke-isolation-helper",
            dependencies: ["NukeIsolation", "NukeJPEG", "NukePNG", "NukeGIF", "NukeWebP", "NukeHEIF", "NukeSVG", "NukeTIFF", "NukeColor", "NukeBMP", "NukeICO", "NukeXBM", "NukeJXL"],
            path: "Sources/nuke-isolation-helper", swiftSettings: swiftSettings
        ),
        // The tests' helper: the codecs plus decoders that crash, hang, allocate without bound
        // and try to open files and sockets.
        .executableTarget(
            name: "NukeIsolationTestHelper", dependencies: ["NukeIsolation", "CNukeIsolation", "NukeJPEG", "NukePNG", "NukeGIF", "NukeSVG", "NukeHEIF", "CNukeIsolationTestSupport"],
            path: "Tests/NukeIsolationTestHelper", swiftSettings: swiftSettings
        ),
        .target(name: "CNukeIsolationTestSupport", path: "Tests/CNukeIsolationTestSupport"),
        .testTarget(
            name: "NukeIsolationTests", dependencies: ["NukeIsolation", "NukeCore", "NukePixels", "NukeSession", "NukeJPEG", "NukePNG", "NukeGIF", "NukeConformance", "CNukeIsolation"],
            path: "Tests/NukeIsolationTests", swiftSettings: swiftSettings
        ),

        // MARK: - Conformance kit (reused by third-party plugins)
        .target(name: "NukeConformance", dependencies: ["NukeCore", "NukePixels", "NukeSession", "NukeNetpbm"], path: "Sources/NukeConformance", swiftSettings: swiftSettings),
        .testTarget(
            name: "NukeConformanceTests", dependencies: ["NukeConformance", "NukeCore", "NukePixels", "NukeNetpbm"],
            path: "Tests/NukeConformanceTests", swiftSettings: swiftSettings
        ),

        // MARK: - Command-line tool
        .executableTarget(
            name: "nuke",
            dependencies: [
                "NukeCore", "NukePixels", "NukeProcessing", "NukeSession", "NukeJPEG", "NukePNG", "NukeGIF", "NukeWebP", "NukeHEIF", "NukeSVG", "NukeNetpbm",
                "NukeTIFF", "NukeColor", "NukeIsolation", "NukeBMP", "NukeICO", "NukeXBM", "NukeJXL",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/nuke", swiftSettings: swiftSettings
        ),
        .testTarget(name: "nukeTests", dependencies: ["nuke", "NukeCore", "NukePixels", "NukeProcessing", "NukeNetpbm", "NukeConformance", "NukeJPEG", "NukePNG", "NukeGIF", "NukeWebP"], path: "Tests/nukeTests", swiftSettings: swiftSettings),

        // Hostile files for every format: limits before pixel memory.
        .target(name: "BombCorpus", dependencies: ["NukeCore"], path: "Tests/BombCorpus", swiftSettings: swiftSettings),
        .testTarget(
            name: "BombTests", dependencies: ["BombCorpus", "NukeCore", "NukeJPEG", "NukePNG", "NukeGIF", "NukeWebP", "NukeHEIF", "NukeSVG", "NukeTIFF", "NukeBMP", "NukeICO", "NukeXBM", "NukeJXL"],
            path: "Tests/BombTests", swiftSettings: swiftSettings
        ),

        // MARK: - Fuzzing (scripts/fuzz.sh builds NukeFuzz with libFuzzer and AddressSanitizer)
        .target(name: "CNukeFuzzSupport", path: "Fuzz/CNukeFuzzSupport"),
        .executableTarget(
            name: "NukeFuzz",
            dependencies: ["CNukeFuzzSupport", "NukeCore", "NukePixels", "NukeJPEG", "NukePNG", "NukeGIF", "NukeWebP", "NukeHEIF", "NukeSVG", "NukeTIFF", "NukeColor", "NukeBMP", "NukeICO", "NukeXBM", "NukeJXL", "NukeIsolation"],
            path: "Fuzz/NukeFuzz", swiftSettings: swiftSettings
        ),

        // MARK: - Benchmarks (ratios against the C libraries called directly)
        .target(
            name: "CBenchmarkBaseline", dependencies: ["CLibJPEG", "CLibPNG", "CLibGIF", "CLibWebP", "CLibHEIF", "CLibSVG", "CLibColor", "CLibTIFF", "CLibJXL"], path: "Benchmarks/CBenchmarkBaseline",
            // librsvg's declarations (CLibSVG.h): its own headers need glib's pkg-config flags.
            cSettings: [.headerSearchPath("../../Sources/Plugins/SVG/CLibSVG")],
            // The baselines call libheif, librsvg and libjxl directly, so they link what the plugins load.
            linkerSettings: ["heif", "rsvg-2", "cairo", "gobject-2.0", "glib-2.0", "jxl"].map { .linkedLibrary($0) }
        ),
        .executableTarget(
            name: "NukeBenchmarks",
            dependencies: ["NukeCore", "NukePixels", "NukeSession", "NukeJPEG", "NukePNG", "NukeGIF", "NukeWebP", "NukeHEIF", "NukeSVG", "NukeColor", "NukeTIFF", "NukeIsolation", "CBenchmarkBaseline", "NukeBMP", "NukeJXL"],
            path: "Benchmarks/NukeBenchmarks", swiftSettings: swiftSettings
        ),
        // Thumbnails in one long-lived process, for Benchmarks/Thumbnails/steady-state.sh.
        .executableTarget(
            name: "NukeSteadyThumbnails",
            dependencies: ["NukeCore", "NukePixels", "NukeJPEG", "NukePNG", "NukeWebP", "NukeHEIF", "NukeColor"],
            path: "Benchmarks/SteadyThumbnails", swiftSettings: swiftSettings
        ),
        // Every bomb's allocations, counted by malloc interposition in its own executable.
        .target(name: "CAllocationCounter", path: "Benchmarks/CAllocationCounter"),
        .executableTarget(
            name: "NukeBombAllocations",
            dependencies: ["BombCorpus", "CAllocationCounter", "NukeCore", "NukeJPEG", "NukePNG", "NukeGIF", "NukeWebP", "NukeHEIF", "NukeSVG", "NukeTIFF", "NukeBMP", "NukeICO", "NukeXBM", "NukeJXL"],
            path: "Benchmarks/BombAllocations", swiftSettings: swiftSettings
        ),
    ]
        // MARK: - Netpbm (PAM, PPM, PGM; Swift, no C library)
        + [
            .target(name: "NukeNetpbm", dependencies: ["NukeCore", "NukePixels", "NukePluginKit"], path: "Sources/Plugins/Netpbm/NukeNetpbm", swiftSettings: swiftSettings),
            .testTarget(name: "NukeNetpbmTests", dependencies: ["NukeNetpbm", "NukeCore"], path: "Tests/NukeNetpbmTests", swiftSettings: swiftSettings),
        ]
        // MARK: - BMP, ICO/CUR and XBM (Swift, no C library)
        // NukeICO reads its entries' DIBs with NukeBMP's package API; its PNG entries go to
        // whatever PNG decoder the registry has (NukePNG when linked).
        + [
            .target(name: "NukeBMP", dependencies: ["NukeCore", "NukePixels", "NukePluginKit"], path: "Sources/Plugins/BMP/NukeBMP", swiftSettings: swiftSettings),
            .target(name: "NukeICO", dependencies: ["NukeCore", "NukePixels", "NukePluginKit", "NukeBMP"], path: "Sources/Plugins/ICO/NukeICO", swiftSettings: swiftSettings),
            .target(name: "NukeXBM", dependencies: ["NukeCore", "NukePixels", "NukePluginKit"], path: "Sources/Plugins/XBM/NukeXBM", swiftSettings: swiftSettings),
            .testTarget(name: "NukeBMPTests", dependencies: ["NukeBMP", "NukeCore", "NukePixels", "NukeConformance", "NukeNetpbm"], path: "Tests/NukeBMPTests", swiftSettings: swiftSettings),
            .testTarget(name: "NukeICOTests", dependencies: ["NukeICO", "NukeBMP", "NukePNG", "NukeCore", "NukePixels", "NukeConformance", "NukeNetpbm"], path: "Tests/NukeICOTests", swiftSettings: swiftSettings),
            // In-process decode timing for Benchmarks/Thumbnails/bmp-vs-pillow.py.
            .executableTarget(name: "NukeBMPBenchmark", dependencies: ["NukeBMP", "NukeCore"], path: "Benchmarks/BMPBenchmark", swiftSettings: swiftSettings),
            .testTarget(name: "NukeXBMTests", dependencies: ["NukeXBM", "NukeCore", "NukePixels", "NukeConformance", "NukeNetpbm"], path: "Tests/NukeXBMTests", swiftSettings: swiftSettings),
        ]
        // MARK: - JPEG (libjpeg-turbo)
        + plugin("JPEG", pkgConfig: "libjpeg", apt: ["libjpeg62-turbo-dev"], brew: ["jpeg-turbo"])
        // MARK: - PNG (libpng)
        + plugin("PNG", pkgConfig: "libpng", apt: ["libpng-dev"], brew: ["libpng"], shimLinks: ["z"])   // zlib's crc32 (APNG re-framing)
        // MARK: - GIF (giflib)
        // Debian's giflib has no pkg-config file: the module map links `gif` and includes
        // gif_lib.h from the default include path.
        + plugin("GIF", pkgConfig: nil, apt: ["libgif-dev"], brew: ["giflib"])
        // MARK: - WebP (libwebp, libwebpdemux, libwebpmux)
        // The module map links all three; pkg-config's libwebpmux brings libwebp's flags.
        + plugin("WebP", pkgConfig: "libwebpmux", apt: ["libwebp-dev"], brew: ["webp"])
        // MARK: - HEIF and AVIF (libheif, with libde265, x265, dav1d and aom)
        // Not linked: the shim opens libheif on first use (Docs/CShims.md), so no pkg-config,
        // whose flags would link it; its header is on the default include path.
        + plugin("HEIF", pkgConfig: nil, apt: ["libheif-dev"], brew: ["libheif"])
        // MARK: - SVG (librsvg with cairo)
        // Not linked either: the shim opens librsvg on first use and declares what it calls in
        // CLibSVG/rsvg_abi.h (glib's pkg-config flags carry -pthread, which SwiftPM refuses).
        + plugin("SVG", pkgConfig: nil, apt: ["librsvg2-dev"], brew: ["librsvg"])
        // MARK: - TIFF (libtiff)
        // Its tests convert CMYK through NukeColor.
        + plugin("TIFF", pkgConfig: "libtiff-4", apt: ["libtiff-dev"], brew: ["libtiff"], testDependencies: ["NukeColor"])
        // MARK: - JPEG XL (libjxl)
        // Not linked: the shim opens libjxl on first use (about 3.6 ms a process to load, with libhwy
        // and brotli), so no pkg-config (libjxl.pc's -DHWY_SHARED_DEFINE is refused by SwiftPM
        // anyway); its headers are on the default include path.
        + plugin("JXL", pkgConfig: nil, apt: ["libjxl-dev"], brew: ["jpeg-xl"])
        // MARK: - Colour management (Little CMS 2)
        // Not a codec: the colour manager the output stage converts with, announced from the
        // same linker section. Its tests decode JPEG, PNG and HEIF fixtures.
        + [
            .systemLibrary(name: "CLibColor", path: "Sources/Plugins/Color/CLibColor", pkgConfig: "lcms2",
                           providers: [.apt(["liblcms2-dev"]), .brew(["little-cms2"])]),
            .target(name: "CColorShim", dependencies: ["CNukeShim", "CLibColor"], path: "Sources/Plugins/Color/CColorShim",
                    cSettings: [.headerSearchPath("../CLibColor")]),
            .target(name: "NukeColor", dependencies: ["NukeCore", "NukePluginKit", "CColorShim", "CLibColor"],
                    path: "Sources/Plugins/Color/NukeColor", swiftSettings: swiftSettings),
            .testTarget(name: "NukeColorTests", dependencies: ["NukeColor", "NukeCore", "NukePixels", "NukeJPEG", "NukePNG", "NukeHEIF", "NukeNetpbm", "NukeConformance"],
                        path: "Tests/NukeColorTests", swiftSettings: swiftSettings),
        ]
)
