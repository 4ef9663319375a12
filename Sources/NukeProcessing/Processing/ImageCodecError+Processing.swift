import NukeCore

extension ImageCodecError.Stage {
    /// Running an image processor (NukeProcessing).
    public static let processing = ImageCodecError.Stage(rawValue: "processing")
}

extension ImageCodecError {
    /// A processor's refusal of an image it cannot process (`.unsupported`, stage `.processing`).
    static func processing(_ message: String) -> ImageCodecError {
        ImageCodecError(.unsupported, stage: .processing, message: message)
    }
}
