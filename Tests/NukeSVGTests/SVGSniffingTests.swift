import Foundation
import NukeCore
import NukeSVG
import Testing

/// SVG's sniffing is NukeSVG's (issue 42: format knowledge stays in its plugin): XML whose root
/// element is `svg`, behind a byte-order mark, declarations, comments or a DOCTYPE.
struct SVGSniffingTests {
    static let svgDocuments: [String] = [
        "<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
        "\u{FEFF}<svg width=\"1\" height=\"1\"></svg>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg/>",
        "  \n<!-- a comment with <svg> inside -->\n<svg>",
        "<?xml version=\"1.0\"?><!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\"><svg>",
        "<!DOCTYPE svg [ <!ENTITY a \"b\"> <!ELEMENT x (y)> ]><svg>",
        "<?xml-stylesheet href=\"a.css\"?><svg:svg xmlns:svg=\"http://www.w3.org/2000/svg\">",
    ]

    @Test(arguments: svgDocuments)
    func sniffsSVG(_ text: String) {
        #expect(ImageType(Data(text.utf8)) == .svg)
    }

    static let notSVG: [String] = [
        "<html><svg></svg></html>",
        "<?xml version=\"1.0\"?><svgx/>",
        "<!-- <svg> -->",
        "<?xml version=\"1.0\"?>",
        "svg",
        "<!DOCTYPE html><html>",
    ]

    @Test(arguments: notSVG)
    func rejectsNonSVG(_ text: String) {
        #expect(ImageType(Data(text.utf8)) == nil)
    }

    @Test func namedAndFoundByExtension() {
        #expect(ImageType.svg.name == "SVG")
        #expect(ImageType(filenameExtension: "SVGZ") == .svg)
    }
}
