/// The built-in processors, with Nuke's names: ``Resize``, ``Crop``, ``Rotate``, ``Flip``,
/// ``RoundedCorners``, ``Circle``, ``GaussianBlur``, ``Flatten``, ``Anonymous`` and
/// ``Composition``.
public enum ImageProcessors {}
