// image.h - image input and output through OpenCV, with a synthetic image when no file is given.
//
// load_image("", ...) returns a deterministic synthetic picture (smooth gradients, hard-edged
// shapes and seeded noise), so every image program runs and checks itself with no file at hand,
// and edges exist for Sobel to find. A path that cannot be read is bad input: one line, exit 2.
// OpenCV stores colour pixels as B, G, R - remember it before applying RGB formulas.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

// Deterministic test picture of w x h pixels; type CV_8UC3 (BGR) or CV_8UC1.
inline cv::Mat synthetic_image(int w, int h, int type = CV_8UC3, uint32_t seed = 7) {
    cv::Mat img(h, w, CV_8UC3);
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> noise(-12, 12);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            int b = 255 * x / std::max(w - 1, 1), g = 255 * y / std::max(h - 1, 1), r = (x * y / 7) & 255;
            cv::Vec3b& p = img.at<cv::Vec3b>(y, x);
            p[0] = cv::saturate_cast<uchar>(b + noise(gen));
            p[1] = cv::saturate_cast<uchar>(g + noise(gen));
            p[2] = cv::saturate_cast<uchar>(r + noise(gen));
        }
    cv::circle(img, {w / 3, h / 2}, std::min(w, h) / 4, cv::Scalar(250, 240, 30), cv::FILLED);
    cv::rectangle(img, {w / 2, h / 5}, {w - w / 8, h - h / 5}, cv::Scalar(20, 60, 200), cv::FILLED);
    cv::line(img, {0, h - 1}, {w - 1, 0}, cv::Scalar(255, 255, 255), std::max(1, w / 100));
    if (type == CV_8UC1) {
        cv::Mat gray;
        cv::cvtColor(img, gray, cv::COLOR_BGR2GRAY);
        return gray;
    }
    return img;
}

// Reads `path` (colour for CV_8UC3, grayscale for CV_8UC1), or makes a w x h synthetic image
// when path is empty. An unreadable path prints one line and exits 2 (bad input).
inline cv::Mat load_image(const std::string& path, int w, int h, int type = CV_8UC3) {
    if (path.empty()) return synthetic_image(w, h, type);
    cv::Mat img = cv::imread(path, type == CV_8UC1 ? cv::IMREAD_GRAYSCALE : cv::IMREAD_COLOR);
    if (img.empty()) {
        std::fprintf(stderr, "error: cannot read image '%s' (missing, unreadable or not an image)\n", path.c_str());
        std::exit(2);
    }
    return img;
}

// Writes a PNG (or any format OpenCV knows from the extension); returns false on failure.
inline bool save_image(const std::string& path, const cv::Mat& img) {
    if (path.empty()) return true;
    bool ok = false;
    try {
        ok = cv::imwrite(path, img);
    } catch (const cv::Exception&) {
        ok = false;
    }
    if (ok) std::printf("  wrote %s (%dx%d)\n", path.c_str(), img.cols, img.rows);
    else std::fprintf(stderr, "warning: could not write '%s'\n", path.c_str());
    return ok;
}
