import Testing
@Test func cliPlaceholder() { #expect(1 + 1 == 2) }
