import ArgumentParser
import Foundation
import NukeCore

/// `nuke info`: what a file is, from its header and a full decode.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show format, size, pixel format, frames (loop count, durations), orientation, ICC profile and progressive scans.",
        discussion: "The header is read in pure Swift (ImageHeader); the rest comes from decoding the file with the registry."
    )

    @Argument(help: "Image files.")
    var files: [String]

    @OptionGroup var isolation: IsolationOptions

    @Flag(help: "Print a JSON array, one object per file.")
    var json = false

    func run() throws {
        isolation.apply(inputs: files)
        var errors: [any Error] = []
        var objects: [[String: Any]] = []
        for (index, path) in files.enumerated() {
            let report = Self.inspect(path)
            if let error = report.error { errors.append(error) }
            if json {
                objects.append(report.jsonObject)
            } else {
                if index > 0 { print("") }
                print(report.text)
                if let error = report.error { Terminal.error(path: path, error) }
            }
        }
        if json { JSONOutput.print(objects) }
        if !errors.isEmpty { throw ExitStatus.code(for: errors) }
    }

    /// Everything `info` reports about one file.
    struct Report {
        var path: String
        var byteCount: Int?
        var type: ImageType?
        var header: ImageHeader?
        var container: ImageContainer?
        var scans: Int?
        var error: (any Error)?

        var image: Image? { container?.image }
        var width: Int? { image?.width ?? header?.width }
        var height: Int? { image?.height ?? header?.height }
        var isProgressive: Bool? {
            guard type == .jpeg else { return nil }
            return header?.isProgressive ?? (container?.userInfo[.isProgressiveKey] as? Bool)
        }
        var isInterlaced: Bool? {
            guard type == .png || type == .gif else { return nil }
            return header?.isProgressive ?? (container?.userInfo[.isProgressiveKey] as? Bool)
        }

        /// What the format's codec shows beyond the fields above (an SVG's intrinsic size, a
        /// HEIF's brand, a TIFF's page and compression), declared by the codec.
        var details: ImageFormatDetails? {
            container.flatMap { ImageCodec.details(of: type, userInfo: $0.userInfo) }
        }

        var text: String {
            var lines = [path]
            func add(_ key: String, _ value: String) {
                lines.append("  " + key.padding(toLength: 13, withPad: " ", startingAt: 0) + value)
            }
            add("format", (type.map { "\($0.name) (\($0.rawValue))" } ?? "unknown") + (byteCount.map { ", \($0) bytes" } ?? ""))
            if let width, let height { add("size", "\(width)×\(height)") }
            if let image {
                add("pixel format", "\(image.bitmap.pixelFormat), alpha \(image.bitmap.alphaMode.rawValue)")
                if let animation = container?.animation {
                    let durations = animation.frameInfos.prefix(8).map { "\($0.duration)" }.joined(separator: ", ")
                    let more = animation.frameCount > 8 ? ", ..." : ""
                    add("frames", "\(animation.frameCount) (decoded on demand), loop count \(animation.loopCount == 0 ? "forever" : String(animation.loopCount))")
                    add("durations", "\(durations)\(more) s as stored; \((animation.duration * 1000).rounded() / 1000) s per loop")
                } else {
                    add("frames", image.isAnimated ? "\(image.frames.count), loop count \(image.loopCount == 0 ? "forever" : String(image.loopCount))" : "1")
                }
                add("orientation", "\(image.orientation.rawValue) (\(image.orientation))")
                add("ICC profile", image.iccProfile.map { "\($0.count) bytes" } ?? "none")
            } else if let header {
                if let depth = header.bitDepth, let components = header.componentCount {
                    add("header", "\(depth)-bit, \(components) component\(components == 1 ? "" : "s")")
                }
                if let frames = header.frameCount { add("frames", "\(frames)") }
            }
            if let isProgressive { add("progressive", isProgressive ? "yes" + (scans.map { ", \($0) scans" } ?? "") : "no (\(scans ?? 1) scan\(scans == 1 ? "" : "s"))") }
            if let isInterlaced { add("interlaced", isInterlaced ? "yes" : "no") }
            if let details { add(details.name, details.summary) }
            if let error { add("error", String(describing: error)) }
            return lines.joined(separator: "\n")
        }

        var jsonObject: [String: Any] {
            var object: [String: Any] = [
                "file": path,
                "bytes": JSONOutput.orNull(byteCount),
                "format": JSONOutput.orNull(type?.name),
                "type": JSONOutput.orNull(type?.rawValue),
                "width": JSONOutput.orNull(width),
                "height": JSONOutput.orNull(height),
                "pixelFormat": JSONOutput.orNull(image.map { "\($0.bitmap.pixelFormat)" }),
                "bitDepth": JSONOutput.orNull(image?.bitmap.pixelFormat.bitsPerChannel ?? header?.bitDepth),
                "channels": JSONOutput.orNull(image?.bitmap.pixelFormat.channelCount ?? header?.componentCount),
                "hasAlpha": JSONOutput.orNull(image?.hasAlpha ?? header?.hasAlpha),
                "frames": JSONOutput.orNull(container?.animation?.frameCount ?? image?.frames.count ?? header?.frameCount),
                "loopCount": JSONOutput.orNull(container?.animation?.loopCount ?? image?.loopCount),
                "durations": JSONOutput.orNull(container?.animation.map { $0.frameInfos.map(\.duration) } ?? image.map { $0.frames.compactMap(\.duration) }),
                "orientation": JSONOutput.orNull(image.map { Int($0.orientation.rawValue) } ?? header?.orientation.map { Int($0.rawValue) }),
                "iccProfile": JSONOutput.orNull(image.map { $0.iccProfile != nil }),
                "iccProfileSize": JSONOutput.orNull(image?.iccProfile?.count),
                "progressive": JSONOutput.orNull(isProgressive),
                "interlaced": JSONOutput.orNull(isInterlaced),
                "scans": JSONOutput.orNull(scans),
                "error": NSNull(),
            ]
            if let details {
                object[details.name.lowercased()] = Dictionary(details.fields.map { ($0.name, JSONOutput.orNull($0.value)) }) { $1 }
            }
            if let error {
                let codecError = error as? ImageCodecError
                object["error"] = [
                    "code": codecError?.code.rawValue ?? "io",
                    "stage": JSONOutput.orNull(codecError?.stage.rawValue),
                    "message": codecError?.message ?? String(describing: error),
                    "description": String(describing: error),
                ] as [String: Any]
            }
            return object
        }
    }

    static func inspect(_ path: String) -> Report {
        var report = Report(path: path)
        let data: Data
        do {
            data = try ImageFiles.read(path)
        } catch {
            report.error = error
            return report
        }
        report.byteCount = data.count
        report.type = ImageType(data)
        report.header = ImageHeader(data)
        do {
            report.container = try ImageDecoderRegistry.shared.decode(data)
            report.scans = report.container?.userInfo[.scanNumberKey] as? Int
            if report.type == nil { report.type = report.container?.type }
        } catch {
            report.error = error
        }
        return report
    }
}
