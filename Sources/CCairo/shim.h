// cairo (PDF and image surfaces), Pango over cairo (text layout, HarfBuzz shaping) and
// poppler's GLib interface (reading a PDF back as a picture): one module, as poppler and Pango
// both include cairo's header. pkg-config's pangocairo gives the paths and libraries of cairo,
// Pango, HarfBuzz and GLib; poppler-glib is linked by the module map.
#include <cairo.h>
#include <cairo-pdf.h>
#include <pango/pangocairo.h>
#include <poppler/glib/poppler.h>

// PANGO_SCALE is a macro Swift imports, but as a plain int; keep the unit in one place.
static inline int hvt_pango_scale(void) { return PANGO_SCALE; }
