import NukeBMP
import NukeColor
import NukeGIF
import NukeHEIF
import NukeICO
import NukeIsolation
import NukeJPEG
import NukePNG
import NukeSVG
import NukeTIFF
import NukeWebP
import NukeXBM

// A helper program for NukeIsolation with every codec of NukeCodecs. Ship it beside an app (or in
// its container image) and point `IsolationHelperExecutable.executable(path:)` at it; the app's
// own executable in helper mode does the same job without a second program (Docs/Isolation.md).
// NukeColor converts CMYK (JPEG, TIFF) as it decodes, so the helper links it too.
IsolatedDecoding.runHelperIfRequested()
print("nuke-isolation-helper: a helper for NukeIsolation; hosts start it with \(IsolationHelperExecutable.helperModeFlag).")
