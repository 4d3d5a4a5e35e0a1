// FreeType names its headers through macros (FT_FREETYPE_H), which a module map cannot; this
// header expands them.
#include <ft2build.h>
#include FT_FREETYPE_H
