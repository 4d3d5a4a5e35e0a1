// The cairo, Pango, GLib and poppler functions VaultPaper's PageRenderer calls, each library a
// trampoline set of its own (load_on_use.h); loaded together, cairo and GLib first.
#include "paper_load.h"

#define CAIRO_FUNCTIONS(X) \
    X(cairo_create) X(cairo_destroy) X(cairo_fill) X(cairo_font_options_create) X(cairo_font_options_destroy) \
    X(cairo_font_options_set_antialias) X(cairo_font_options_set_hint_metrics) X(cairo_font_options_set_hint_style) \
    X(cairo_image_surface_create) X(cairo_image_surface_get_data) X(cairo_image_surface_get_height) \
    X(cairo_image_surface_get_stride) X(cairo_image_surface_get_width) X(cairo_move_to) X(cairo_paint) \
    X(cairo_pdf_surface_create_for_stream) X(cairo_pdf_surface_restrict_to_version) X(cairo_pdf_surface_set_metadata) \
    X(cairo_rectangle) X(cairo_restore) X(cairo_save) X(cairo_scale) X(cairo_set_antialias) X(cairo_set_line_width) \
    X(cairo_set_source_rgb) X(cairo_status) X(cairo_status_to_string) X(cairo_stroke) X(cairo_surface_destroy) \
    X(cairo_surface_finish) X(cairo_surface_flush) X(cairo_surface_status)
HVT_LOAD_ON_USE(cairo, "libcairo.so.2", "libcairo2", "sheet-pages", "laying out and writing recovery sheets", CAIRO_FUNCTIONS)

#define PANGO_FUNCTIONS(X) \
    X(pango_attr_insert_hyphens_new) X(pango_attr_list_insert) X(pango_attr_list_new) X(pango_attr_list_unref) \
    X(pango_context_load_font) X(pango_context_set_round_glyph_positions) X(pango_font_describe) \
    X(pango_font_description_free) X(pango_font_description_from_string) X(pango_font_description_get_family) \
    X(pango_font_map_create_context) X(pango_layout_get_baseline) X(pango_layout_get_line_count) \
    X(pango_layout_get_size) X(pango_layout_new) X(pango_layout_set_alignment) X(pango_layout_set_attributes) \
    X(pango_layout_set_font_description) X(pango_layout_set_line_spacing) X(pango_layout_set_text) \
    X(pango_layout_set_width) X(pango_layout_set_wrap)
HVT_LOAD_ON_USE(pango, "libpango-1.0.so.0", "libpango-1.0-0", "sheet-text", "laying out the text of recovery sheets", PANGO_FUNCTIONS)

#define PANGOCAIRO_FUNCTIONS(X) \
    X(pango_cairo_context_set_font_options) X(pango_cairo_context_set_resolution) X(pango_cairo_font_map_new) \
    X(pango_cairo_show_layout)
HVT_LOAD_ON_USE(pangocairo, "libpangocairo-1.0.so.0", "libpangocairo-1.0-0", "sheet-text-drawing", "drawing the text of recovery sheets", PANGOCAIRO_FUNCTIONS)

#define GLIB_FUNCTIONS(X) X(g_bytes_new) X(g_bytes_unref) X(g_error_free)
HVT_LOAD_ON_USE(glib, "libglib-2.0.so.0", "libglib2.0-0", "sheet-glib", "GLib, under Pango and poppler", GLIB_FUNCTIONS)

#define GOBJECT_FUNCTIONS(X) X(g_object_unref)
HVT_LOAD_ON_USE(gobject, "libgobject-2.0.so.0", "libglib2.0-0", "sheet-gobject", "GLib's objects, under Pango and poppler", GOBJECT_FUNCTIONS)

#define POPPLER_FUNCTIONS(X) \
    X(poppler_document_get_n_pages) X(poppler_document_get_page) X(poppler_document_new_from_bytes) \
    X(poppler_page_get_size) X(poppler_page_render_for_printing)
HVT_LOAD_ON_USE(poppler, "libpoppler-glib.so.8", "libpoppler-glib8", "pdf-read", "reading a PDF sheet back", POPPLER_FUNCTIONS)
