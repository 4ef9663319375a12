/// Where a host finds the program it starts as a helper.
///
/// The helper must link the same codec products as the host (it decodes with its own
/// `ImageDecoderRegistry.shared`) and call ``IsolatedDecoding/runHelperIfRequested()`` first
/// thing in `main`. Three ways to ship it (Docs/Isolation.md):
/// - the app's own executable started in helper mode (``currentExecutable``, the default): nothing
///   more to ship;
/// - the `nuke-isolation-helper` product of this package, or a helper target of the app's own,
///   built by `swift build` and installed beside the app (`executable(path:)`);
/// - a path inside a container image (`executable(path:)`).
public struct IsolationHelperExecutable: Sendable, Hashable {
    /// The program.
    public var path: String
    /// Arguments before the helper-mode flag.
    public var arguments: [String]

    /// The running program itself (`/proc/self/exe`), started in helper mode.
    public static let currentExecutable = IsolationHelperExecutable(path: "/proc/self/exe", arguments: [])

    /// A separate program.
    public static func executable(path: String, arguments: [String] = []) -> IsolationHelperExecutable {
        IsolationHelperExecutable(path: path, arguments: arguments)
    }

    /// The argument that starts a program in helper mode.
    public static let helperModeFlag = "--nuke-isolation-helper"

    /// The argument after ``helperModeFlag`` that starts the program as a zygote: it warms up
    /// once, then starts each helper as a copy of itself (``HelperZygote``).
    static let zygoteModeFlag = "--zygote"
}
