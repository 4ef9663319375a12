import NukeCore

extension ImageContainer.UserInfoKey {
}
