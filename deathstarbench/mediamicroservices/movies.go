package mediamicroservices

import (
	"context"
	"strconv"

	"golang.org/x/sync/errgroup"

	mm "github.com/orchbench/orchbench/deathstarbench/mediamicroservices/thrift/gen-go/mediamicro"
)

// CastInfoService implements mm.CastInfoService.
type CastInfoService struct{ Casts records[mm.CastInfo] }

// WriteCastInfo implements mm.CastInfoService; writing a cast member again
// replaces it, so a loader can run again.
func (s *CastInfoService) WriteCastInfo(ctx context.Context, _ int64, castInfoID int64, name string, gender bool, intro string) error {
	info := mm.CastInfo{CastInfoID: castInfoID, Name: name, Gender: gender, Intro: intro}
	if err := s.Casts.put(ctx, strconv.FormatInt(castInfoID, 10), info); err != nil {
		return internalError("store cast info", err)
	}
	return nil
}

// ReadCastInfo implements mm.CastInfoService, in the order asked.
func (s *CastInfoService) ReadCastInfo(ctx context.Context, _ int64, castIDs []int64) ([]*mm.CastInfo, error) {
	ids := make([]string, len(castIDs))
	for i, id := range castIDs {
		ids[i] = strconv.FormatInt(id, 10)
	}
	found, err := s.Casts.get(ctx, ids)
	if err != nil {
		return nil, internalError("read cast info", err)
	}
	out := make([]*mm.CastInfo, len(ids))
	for i, id := range ids {
		info, ok := found[id]
		if !ok {
			return nil, notFound("Cast info %s not found", id)
		}
		out[i] = &info
	}
	return out, nil
}

// PlotService implements mm.PlotService.
type PlotService struct{ Plots records[string] }

// WritePlot implements mm.PlotService.
func (s *PlotService) WritePlot(ctx context.Context, _ int64, plotID int64, plot string) error {
	if err := s.Plots.put(ctx, strconv.FormatInt(plotID, 10), plot); err != nil {
		return internalError("store plot", err)
	}
	return nil
}

// ReadPlot implements mm.PlotService.
func (s *PlotService) ReadPlot(ctx context.Context, _ int64, plotID int64) (string, error) {
	plot, ok, err := s.Plots.getOne(ctx, strconv.FormatInt(plotID, 10))
	if err != nil {
		return "", internalError("read plot", err)
	}
	if !ok {
		return "", notFound("Plot %d not found", plotID)
	}
	return plot, nil
}

// MovieInfoService implements mm.MovieInfoService.
type MovieInfoService struct{ Movies records[mm.MovieInfo] }

// WriteMovieInfo implements mm.MovieInfoService.
func (s *MovieInfoService) WriteMovieInfo(ctx context.Context, _ int64, info *mm.MovieInfo) error {
	if info == nil || info.MovieID == "" {
		return badRequest("movie info without a movie_id")
	}
	if err := s.Movies.put(ctx, info.MovieID, *info); err != nil {
		return internalError("store movie info", err)
	}
	return nil
}

// ReadMovieInfo implements mm.MovieInfoService.
func (s *MovieInfoService) ReadMovieInfo(ctx context.Context, _ int64, movieID string) (*mm.MovieInfo, error) {
	info, ok, err := s.Movies.getOne(ctx, movieID)
	if err != nil {
		return nil, internalError("read movie info", err)
	}
	if !ok {
		return nil, notFound("Movie %s not found", movieID)
	}
	return &info, nil
}

// PageService implements mm.PageService: a movie's page, its info first,
// then its cast, plot and reviews in parallel.
type PageService struct {
	MovieInfo   mm.MovieInfoService
	CastInfo    mm.CastInfoService
	Plot        mm.PlotService
	MovieReview mm.MovieReviewService
}

// ReadPage implements mm.PageService.
func (s *PageService) ReadPage(ctx context.Context, reqID int64, movieID string, reviewStart, reviewStop int32) (*mm.Page, error) {
	info, err := s.MovieInfo.ReadMovieInfo(ctx, reqID, movieID)
	if err != nil {
		return nil, err
	}
	page := &mm.Page{MovieInfo: info}
	castIDs := make([]int64, len(info.Casts))
	for i, cast := range info.Casts {
		castIDs[i] = cast.CastInfoID
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		page.CastInfos, err = s.CastInfo.ReadCastInfo(gctx, reqID, castIDs)
		return err
	})
	g.Go(func() (err error) {
		page.Plot, err = s.Plot.ReadPlot(gctx, reqID, info.PlotID)
		return err
	})
	g.Go(func() (err error) {
		page.Reviews, err = s.MovieReview.ReadMovieReviews(gctx, reqID, movieID, reviewStart, reviewStop)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return page, nil
}
