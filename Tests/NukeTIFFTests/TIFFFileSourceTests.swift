import Foundation
import NukeColor
import NukeCore
import NukeTIFF
import Testing

/// A TIFF read from an open file (``ImageDecodingContext/file``), the bytes libtiff asks for at a
/// time, decodes as the whole file in memory does: the same pixels, pages, metadata and errors.
@Suite struct TIFFFileSourceTests {
    static let files: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: TIFFTestPaths.fixtures.path)) ?? [])
        .filter { $0.hasSuffix(".tif") }.sorted()

    /// Decodes `name` from memory, or from its file with only its first 16 bytes in `data`.
    static func decode(_ name: String, fromFile: Bool, targetSize: ImageSize? = nil, page: Int? = nil) -> Result<ImageContainer, ImageCodecError> {
        Result { () throws(ImageCodecError) in
            let url = TIFFTestPaths.fixtures.appendingPathComponent(name)
            guard let whole = try? Data(contentsOf: url) else { throw ImageCodecError(.noCodec, stage: .decoding, message: "cannot read \(name)") }
            var context = ImageDecodingContext(data: fromFile ? whole.prefix(16) : whole, targetSize: targetSize, contentMode: .aspectFit,
                                               prefersHighBitDepth: true)
            if fromFile {
                context.file = ImageFileSource(path: url.path)
                #expect(context.file?.size == whole.count)
            }
            if let page { context.userInfo[ImageDecodingContext.tiffPageOption] = page }
            do {
                return try ImageDecoderRegistry.shared.decode(context)
            } catch let error as ImageCodecError {
                throw error
            } catch {
                throw ImageCodecError(.internalFailure, stage: .decoding, message: "\(error)")
            }
        }
    }

    @Test(arguments: files)
    func aFileDecodesAsItsBytesDo(_ name: String) {
        for (targetSize, page) in [(nil, nil), (ImageSize(width: 16, height: 16), nil), (nil, 2)] as [(ImageSize?, Int?)] {
            let memory = Self.decode(name, fromFile: false, targetSize: targetSize, page: page)
            let file = Self.decode(name, fromFile: true, targetSize: targetSize, page: page)
            switch (memory, file) {
            case let (.success(a), .success(b)):
                #expect(a.image.bitmap == b.image.bitmap, "\(name), \(String(describing: targetSize)), page \(String(describing: page))")
                #expect(a.image.orientation == b.image.orientation && a.image.colorInfo == b.image.colorInfo, "\(name)")
                #expect(a.userInfo[.tiffPageCountKey] as? Int == b.userInfo[.tiffPageCountKey] as? Int, "\(name)")
            case let (.failure(a), .failure(b)):
                #expect(a.code == b.code, "\(name): \(a) from memory, \(b) from the file")
            default:
                Issue.record("\(name), page \(String(describing: page)): \(memory) from memory, \(file) from the file")
            }
        }
    }

    @Test func aFileThatIsNotThereOrNotAFileIsNotASource() {
        #expect(ImageFileSource(path: "/nonexistent/file.tif") == nil)
        #expect(ImageFileSource(path: TIFFTestPaths.fixtures.path) == nil)
    }
}
