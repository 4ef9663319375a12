// `import Nuke`: Nuke's module on Linux. It re-exports the pipeline (NukePipeline), the core
// (NukeCore: decoders, encoders, the image model) and the processors (NukeProcessing), and links
// the default codecs, which register themselves: JPEG, PNG, GIF, WebP, HEIF/AVIF, TIFF, JPEG XL,
// BMP and ICO. An app that wants fewer codecs lists `NukePipeline` and the codec products it
// wants instead of `Nuke`.
@_exported import NukeCore
@_exported import NukePipeline
@_exported import NukeProcessing
