import NukeIsolation
import ThumbnailServer

// This executable is also the isolation helper for HEIF, AVIF and SVG: in helper mode it decodes
// one image and exits before anything else runs.
IsolatedDecoding.runHelperIfRequested()
await ServiceMain.run()
