/*
 * png_check.c: is a screenshot more than a blank page?  Decodes a PNG
 * (8-bit RGB or RGBA, not interlaced: what headless Chromium writes) with
 * zlib, and counts
 *   ink     pixels that differ from the page background (the most common
 *           colour) and from white by more than 24 levels in a channel;
 *   colour  pixels whose channels spread by more than 60 levels (plots
 *           are coloured; text and rules are grey).
 *
 *   png_check FILE.png MIN_WIDTH MIN_INK_PCT MIN_COLOUR_PCT
 *
 * prints the figures and exits 0 when the image is at least MIN_WIDTH
 * wide and both shares reach their minimum, 1 otherwise, 2 for a file it
 * cannot read.  A test helper, not part of pplan.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Undoes the PNG row filters in place; rows of 1 + stride bytes. */
static int unfilter(unsigned char *raw, uint32_t h, size_t stride, int bpp)
{
	for (uint32_t y = 0; y < h; y++) {
		unsigned char *row = raw + y * (stride + 1), *cur = row + 1;
		unsigned char *prev = y ? raw + (y - 1) * (stride + 1) + 1 : NULL;
		int f = row[0];
		for (size_t i = 0; i < stride; i++) {
			int a = i >= (size_t)bpp ? cur[i - bpp] : 0;
			int b = prev ? prev[i] : 0;
			int c = prev && i >= (size_t)bpp ? prev[i - bpp] : 0;
			switch (f) {
			case 0: break;
			case 1: cur[i] = (unsigned char)(cur[i] + a); break;
			case 2: cur[i] = (unsigned char)(cur[i] + b); break;
			case 3: cur[i] = (unsigned char)(cur[i] + (a + b) / 2); break;
			case 4: cur[i] = (unsigned char)(cur[i] + paeth(a, b, c)); break;
			default: return -1;
			}
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	FILE *f;
	unsigned char *file = NULL, *idat = NULL, *raw = NULL;
	long len;
	size_t idat_len = 0, pos = 8, stride;
	uint32_t w = 0, h = 0;
	int ctype = -1, bpp, rc = 2;
	uLongf raw_len;
	static uint32_t hist[1 << 18];
	uint32_t bg = 0;
	unsigned long ink = 0, colour = 0;
	double ink_pct, colour_pct;

	if (argc != 5) {
		fprintf(stderr, "usage: png_check FILE.png MIN_WIDTH MIN_INK_PCT MIN_COLOUR_PCT\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f) {
		fprintf(stderr, "png_check: %s: cannot open\n", argv[1]);
		return 2;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 8 || fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "png_check: %s: cannot read\n", argv[1]);
		fclose(f);
		return 2;
	}
	file = malloc((size_t)len);
	idat = malloc((size_t)len);
	if (!file || !idat || fread(file, 1, (size_t)len, f) != (size_t)len ||
	    memcmp(file, "\x89PNG\r\n\x1a\n", 8) != 0) {
		fprintf(stderr, "png_check: %s: not a PNG file\n", argv[1]);
		goto out;
	}
	while (pos + 12 <= (size_t)len) {
		uint32_t n = be32(file + pos);
		const unsigned char *type = file + pos + 4, *data = file + pos + 8;
		if (n > (size_t)len - pos - 12)
			break;
		if (!memcmp(type, "IHDR", 4) && n >= 13) {
			w = be32(data), h = be32(data + 4);
			if (data[8] != 8 || (data[9] != 2 && data[9] != 6) || data[12] != 0) {
				fprintf(stderr, "png_check: %s: only 8-bit RGB/RGBA, not interlaced\n",
					argv[1]);
				goto out;
			}
			ctype = data[9];
		} else if (!memcmp(type, "IDAT", 4)) {
			memcpy(idat + idat_len, data, n);
			idat_len += n;
		} else if (!memcmp(type, "IEND", 4)) {
			break;
		}
		pos += 12 + n;
	}
	if (ctype < 0 || w == 0 || h == 0 || w > 100000 || h > 100000) {
		fprintf(stderr, "png_check: %s: no usable IHDR\n", argv[1]);
		goto out;
	}
	bpp = ctype == 6 ? 4 : 3;
	stride = (size_t)w * bpp;
	raw_len = (uLongf)(h * (stride + 1));
	raw = malloc(raw_len);
	if (!raw || uncompress(raw, &raw_len, idat, (uLong)idat_len) != Z_OK ||
	    raw_len != h * (stride + 1) || unfilter(raw, h, stride, bpp) != 0) {
		fprintf(stderr, "png_check: %s: corrupt image data\n", argv[1]);
		goto out;
	}
	/* The background: the most common colour (6 bits a channel). */
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++) {
			const unsigned char *p = raw + y * (stride + 1) + 1 + (size_t)x * bpp;
			hist[(p[0] >> 2) << 12 | (p[1] >> 2) << 6 | (p[2] >> 2)]++;
		}
	for (uint32_t i = 1; i < (1u << 18); i++)
		if (hist[i] > hist[bg])
			bg = i;
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++) {
			const unsigned char *p = raw + y * (stride + 1) + 1 + (size_t)x * bpp;
			int r = p[0], g = p[1], b = p[2];
			int br = (int)(bg >> 12) << 2, bgc = (int)((bg >> 6) & 63) << 2,
			    bb = (int)(bg & 63) << 2;
			int far_bg = abs(r - br) > 24 || abs(g - bgc) > 24 || abs(b - bb) > 24;
			int far_white = r < 231 || g < 231 || b < 231;
			int hi = r > g ? (r > b ? r : b) : (g > b ? g : b);
			int lo = r < g ? (r < b ? r : b) : (g < b ? g : b);
			ink += far_bg && far_white;
			colour += hi - lo > 60;
		}
	ink_pct = 100.0 * ink / ((double)w * h);
	colour_pct = 100.0 * colour / ((double)w * h);
	printf("png_check: %s: %u x %u, background #%02x%02x%02x, ink %.2f %%, colour %.2f %%\n",
	       argv[1], w, h, (bg >> 12) << 2, ((bg >> 6) & 63) << 2, (bg & 63) << 2, ink_pct,
	       colour_pct);
	rc = (long)w >= atol(argv[2]) && ink_pct >= atof(argv[3]) && colour_pct >= atof(argv[4])
		     ? 0 : 1;
	if (rc)
		printf("png_check: FAIL: want width >= %s, ink >= %s %%, colour >= %s %%\n", argv[2],
		       argv[3], argv[4]);
out:
	fclose(f);
	free(file);
	free(idat);
	free(raw);
	return rc;
}
