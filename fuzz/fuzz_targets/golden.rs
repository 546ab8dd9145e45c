//! Any bytes, as a PNG for `framewise golden`: decoding never panics nor allocates past the
//! decoder's limit; an image that decodes has `width × height × 3` bytes and compares with
//! itself as identical (SSIM 1), and against a copy one pixel narrower as a different size.
#![no_main]

use framewise_analysis::golden::{compare, decode_png, RgbImage, DEFAULT_THRESHOLD};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(image) = decode_png(data) else {
        return;
    };
    assert_eq!(
        image.rgb.len() as u64,
        u64::from(image.width_px) * u64::from(image.height_px) * 3
    );
    // SSIM over a large image is slow; the comparison's own edges are in small ones.
    if image.rgb.len() > 1 << 16 {
        return;
    }
    match compare(&image, &image, DEFAULT_THRESHOLD) {
        Ok(same) => {
            assert!(same.pass, "an image differs from itself: {}", same.reason);
            assert_eq!(same.golden_size, same.frame_size);
        }
        Err(e) => assert!(!e.to_string().contains('\n')),
    }
    let narrower = RgbImage {
        width_px: image.width_px + 1,
        height_px: image.height_px,
        rgb: image.rgb.clone(),
    };
    let other = compare(&image, &narrower, DEFAULT_THRESHOLD).expect("sizes differ: no score");
    assert!(!other.pass && other.ssim.is_none());
});
