import NukeCore
