import NukeCore
for codec in ImageCodecs.linked { print(codec.info) }
